// Connection-string parameters the EventStoreDB client (6.x) accepts but does not honour. It
// reads `tlsVerifyCert=false`, prints a warning and verifies the server's certificate all the
// same: a node with a self-signed certificate then fails at its first call rather than at start.
// Such a string is refused before the client is made, saying what works instead.

/** The client's own reading of a parameter name: case, `-` and `_` do not matter. */
const flat = (name: string) => name.trim().toLowerCase().replace(/[_-]/g, '');

/** A one-line message for a parameter the client would ignore; undefined when there is none. */
export function ignoredParameterProblem(connectionString: string): string | undefined {
  const query = connectionString.indexOf('?');
  if (query < 0) return undefined;
  for (const pair of connectionString.slice(query + 1).split(/[&?]/)) {
    const [name = '', value = ''] = pair.split('=', 2);
    if (flat(name) === 'tlsverifycert' && value.trim().toLowerCase() === 'false') {
      return 'tlsVerifyCert=false is ignored by the EventStoreDB client (it verifies the certificate regardless): name the CA that signed the server certificate with tlsCAFile=<path> instead';
    }
  }
  return undefined;
}
