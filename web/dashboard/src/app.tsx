import { ConnectPage } from './connect';
import { Card, Shell } from './layout';

/** The dashboard's pages, by path (the API answers this app for each of them: api/pages.ts). */
export function App() {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  if (path === '/connect') return <ConnectPage />;
  return (
    <Shell>
      <Card title="Page not found">
        <p>There is no page at this address.</p>
      </Card>
    </Shell>
  );
}
