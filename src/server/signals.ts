// Named counters in shared memory that one thread raises and others read or wait on
// (Atomics.waitAsync): how the writer tells background work that a change it waits for is
// durable, without a message. A signal is one int32; a bank is many under one name, for marks
// raised per key (a slot per hash of the key). Every thread builds the same table from the same
// layout.

/** A name and its number of int32 slots: 1 for a signal, more for a bank. */
export type SignalLayout = ReadonlyArray<readonly [name: string, slots: number]>;

export class Signals {
  private readonly slots = new Map<string, Int32Array>();

  constructor(
    readonly buffer: SharedArrayBuffer,
    layout: SignalLayout,
  ) {
    let at = 0;
    for (const [name, slots] of layout) {
      this.slots.set(name, new Int32Array(buffer, at * Int32Array.BYTES_PER_ELEMENT, slots));
      at += slots;
    }
  }

  static allocate(layout: SignalLayout): Signals {
    const slots = layout.reduce((n, [, s]) => n + s, 0);
    return new Signals(new SharedArrayBuffer(Math.max(1, slots) * Int32Array.BYTES_PER_ELEMENT), layout);
  }

  /** The counter of `name`, in slot 0 of the array it returns (every slot of a bank). */
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
