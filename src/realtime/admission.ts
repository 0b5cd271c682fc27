// Caps on the realtime streams a node holds: per client address (one address cannot take the
// node's sockets and memory) and in all (the node stays under its open-files limit). A slot is
// taken before anything is recorded for the connection and given back when its response closes.

export type Refusal = { status: 429 | 503; message: string };

/** Seconds a refused client is told to wait: slots free up only as other streams close. */
export const ADMISSION_RETRY_AFTER_SECONDS = 30;

export class ConnectionAdmission {
  private readonly byAddress = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: { perAddress: number; total: number }) {}

  /** Takes a slot for the address, or says why not. */
  admit(address: string): Refusal | undefined {
    if (this.total >= this.limits.total) {
      return { status: 503, message: `This node holds its maximum of ${this.limits.total} realtime connections; reconnect in a moment` };
    }
    const held = this.byAddress.get(address) ?? 0;
    if (held >= this.limits.perAddress) {
      return { status: 429, message: `Too many realtime connections from this address (at most ${this.limits.perAddress})` };
    }
    this.byAddress.set(address, held + 1);
    this.total++;
    return undefined;
  }

  release(address: string): void {
    const held = this.byAddress.get(address);
    if (held === undefined) return;
    if (held <= 1) this.byAddress.delete(address);
    else this.byAddress.set(address, held - 1);
    this.total--;
  }
}
