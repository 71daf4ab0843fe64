/**
 * A meeting point for a fixed number of parties: `arrive` resolves once every party has
 * arrived or left. A party that fails leaves, so its partners go on alone instead of
 * waiting for it forever.
 */
export class Barrier {
  private waiting: number;
  private readonly opened: Promise<void>;
  private open!: () => void;
  private readonly gone = new Set<string>();

  constructor(parties: number) {
    if (!(Number.isInteger(parties) && parties > 0)) throw new Error(`a barrier needs at least one party, got ${parties}`);
    this.waiting = parties;
    this.opened = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  /** Counts `party` (once) and waits for the others. */
  arrive(party: string): Promise<void> {
    this.count(party);
    return this.opened;
  }

  /** Counts `party` (once) without waiting: it will not come. */
  leave(party: string): void {
    this.count(party);
  }

  get isOpen(): boolean {
    return this.waiting === 0;
  }

  private count(party: string): void {
    if (this.gone.has(party)) return;
    this.gone.add(party);
    this.waiting--;
    if (this.waiting === 0) this.open();
  }
}
