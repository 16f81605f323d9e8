import { describe, expect, it } from '@jest/globals';
import { asksForHuman } from '../../lib/conversations/escalation';

describe('asking for a person in plain text', () => {
  it.each([
    'Can I talk to a human?',
    'I want to speak with a real person please',
    'connect me to an operator',
    'Operator!',
    'human agent please',
    'Позовите оператора, пожалуйста',
    'Хочу поговорить с живым человеком',
    'соедините с менеджером',
    'Ich möchte mit einem Mitarbeiter sprechen',
    'Je veux parler à un conseiller',
    'Quiero hablar con una persona',
    'Quero falar com um atendente',
    'Vorrei parlare con un operatore',
  ])('detects %p', (text) => expect(asksForHuman(text)).toBe(true));

  it.each([
    'What is the company mascot?',
    'Who founded the company? Was it a person from Berlin?',
    'How do humans breathe?',
    'Is your support team available on weekends?',
    'Какой у вас график работы?',
    'The agent field in the form is empty',
  ])('does not detect %p', (text) => expect(asksForHuman(text)).toBe(false));
});
