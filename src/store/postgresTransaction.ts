// One transaction on a connection of its own from the pool. A checked-out connection has no
// error listener of the pool's (node-postgres removes it at checkout), and one that fails between
// two queries — the server restarted, an operator ended it — would otherwise crash the process;
// such a connection, or one whose rollback failed, is destroyed rather than handed out again.
import type { Pool, PoolClient } from 'pg';

/**
 * BEGIN with `prelude` (statements without parameters, sent in the same round trip, e.g. taking
 * a lock), then `work`, then COMMIT; a rejection of `work` rolls back and is rethrown.
 */
export async function transaction<T>(pool: Pool, prelude: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const onError = () => (broken = true);
  client.on('error', onError);
  try {
    await client.query(prelude ? `BEGIN; ${prelude}` : 'BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
