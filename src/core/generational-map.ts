// A bounded map that keeps what is in use: entries live in a young generation until it holds
// `generationSize` of them, when it becomes the old generation and the previous old one is
// dropped whole. Reading an old entry moves it to the young generation. So an entry read at least
// once per generation stays, whatever else passes through, and the map never holds more than
// twice `generationSize`. A map emptied whenever it grew past a bound forgets at once everything
// readers are using, and makes them all ask for it again together.

export class GenerationalMap<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly generationSize: number) {
    if (!(generationSize >= 1)) throw new Error('a generation holds at least one entry');
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined || this.young.has(key)) return v;
    if (!this.old.has(key)) return undefined;
    const moved = this.old.get(key) as V;
    this.old.delete(key);
    this.set(key, moved);
    return moved;
  }

  has(key: K): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: K, value: V): void {
    this.old.delete(key);
    this.young.set(key, value);
    if (this.young.size >= this.generationSize) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  delete(key: K): void {
    this.young.delete(key);
    this.old.delete(key);
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }

  /** Entries held, over both generations. */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
