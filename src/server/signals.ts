// Named counters in shared memory, one int32 each, that one thread raises and others wait on
// (Atomics.waitAsync): how the writer tells background work that a change it waits for is
// durable, without a message. Every thread builds the same table from the same list of names.
export class Signals {
  private readonly slots = new Map<string, Int32Array>();

  constructor(
    readonly buffer: SharedArrayBuffer,
    names: readonly string[],
  ) {
    names.forEach((name, i) => this.slots.set(name, new Int32Array(buffer, i * Int32Array.BYTES_PER_ELEMENT, 1)));
  }

  static allocate(names: readonly string[]): Signals {
    return new Signals(new SharedArrayBuffer(Math.max(1, names.length) * Int32Array.BYTES_PER_ELEMENT), names);
  }

  /** The counter of `name`, in slot 0 of the array it returns. */
  counter(name: string): Int32Array {
    const slot = this.slots.get(name);
    if (!slot) throw new Error(`no signal named ${name}`);
    return slot;
  }

  raise(name: string): void {
    const slot = this.counter(name);
    Atomics.add(slot, 0, 1);
    Atomics.notify(slot, 0);
  }
}
