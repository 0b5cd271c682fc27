// Online: who is signed in to a realtime client now, on which nodes, since when (the log's time of
// their earliest live sign-in); refreshed every few seconds, so a killed node's users leave it
// once its lease lapses.
import type { OnlineList } from '../../../contract/console.js';
import { when } from '../format.js';
import { useApi } from '../hooks.js';
import { Failure, Loading } from '../states.js';
import { Table } from '../table.js';
import { oIdColumn } from './users.js';

export function OnlinePage() {
  const { data, error, reload } = useApi<OnlineList>('/online', 3000);
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  return (
    <section>
      <h1>Online</h1>
      <p class="subtle">
        {data.total === 1 ? '1 user' : `${data.total} users`} signed in to a realtime client on a live node
        {data.users.length < data.total ? `; the first ${data.users.length} by their sign-in` : ''}.
      </p>
      <Table
        label="Users online"
        rows={data.users}
        rowKey={(u) => u.oId}
        empty="Nobody is signed in to a realtime client right now."
        columns={[
          oIdColumn(),
          { label: 'Name', sort: (u) => u.name, render: (u) => u.name },
          { label: 'Clients', sort: (u) => u.clients, render: (u) => u.clients },
          { label: 'Since', sort: (u) => u.since, render: (u) => when(u.since) },
          { label: 'Nodes', sort: (u) => u.nodes.join(' '), render: (u) => u.nodes.join(', ') },
        ]}
      />
    </section>
  );
}
