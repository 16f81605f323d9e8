/**
 * Why a file could not be read, in words for its owner; the file is `failed` with this reason and nothing of it is
 * indexed. Retrying cannot help: the same bytes fail the same way.
 */
export class UnreadableFile extends Error {
  constructor(
    readonly reason: 'encrypted' | 'scanned' | 'corrupt' | 'too_many_pages' | 'too_much_text' | 'empty' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableFile';
  }
}
