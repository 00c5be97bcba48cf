/**
 * Reading answers from the user. On a terminal: a readline prompt (a password without
 * echo). Otherwise: stdin is read line by line, one line per answer, so scripts and
 * tests can pipe answers in. Prompts go to stderr so stdout stays clean for --json.
 */
import { createInterface, type Interface } from 'node:readline';

export class Prompter {
  readonly interactive: boolean;
  private lines: AsyncIterator<string> | undefined;
  private rl: Interface | undefined;
  private eof = false;

  constructor(
    private readonly input: NodeJS.ReadStream = process.stdin,
    private readonly output: NodeJS.WriteStream = process.stderr,
  ) {
    this.interactive = !!input.isTTY;
  }

  /**
   * Asks one question. Resolves with the answer (trimmed), or null when stdin has ended
   * or `signal` aborted the prompt (e.g. the question was answered elsewhere).
   */
  async ask(prompt: string, opts: { hidden?: boolean; signal?: AbortSignal } = {}): Promise<string | null> {
    if (opts.signal?.aborted) return null;
    if (this.interactive) return opts.hidden ? this.askHidden(prompt, opts.signal) : this.askTty(prompt, opts.signal);
    this.output.write(prompt);
    const line = await this.nextLine(opts.signal);
    if (line === null) {
      this.output.write('\n');
      return null;
    }
    this.output.write(opts.hidden ? '\n' : `${line}\n`);
    return line.trim();
  }

  private async nextLine(signal?: AbortSignal): Promise<string | null> {
    if (this.eof) return null;
    if (!this.lines) {
      this.rl = createInterface({ input: this.input, crlfDelay: Infinity, terminal: false });
      this.lines = this.rl[Symbol.asyncIterator]();
    }
    const next = this.lines.next();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<null>((resolve) => {
      onAbort = () => resolve(null);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const r = await Promise.race([next.then((v) => v), aborted]);
      if (r === null) {
        // The pending read still owns the next line; keep it for the next question.
        this.lines = prepend(next, this.lines);
        return null;
      }
      if (r.done) {
        this.eof = true;
        return null;
      }
      return r.value;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  private askTty(prompt: string, signal?: AbortSignal): Promise<string | null> {
    const rl = createInterface({ input: this.input, output: this.output, terminal: true });
    return new Promise((resolve) => {
      let done = false;
      const finish = (v: string | null) => {
        if (done) return;
        done = true;
        signal?.removeEventListener('abort', onAbort);
        rl.close();
        resolve(v);
      };
      const onAbort = () => {
        this.output.write('\n');
        finish(null);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      rl.once('close', () => finish(null));
      rl.once('SIGINT', () => {
        rl.close();
        process.kill(process.pid, 'SIGINT');
      });
      rl.question(prompt, (answer) => finish(answer.trim()));
    });
  }

  /** A password prompt that echoes nothing (raw mode). */
  private askHidden(prompt: string, signal?: AbortSignal): Promise<string | null> {
    const input = this.input;
    this.output.write(prompt);
    return new Promise((resolve) => {
      let value = '';
      const wasRaw = input.isRaw;
      input.setRawMode(true);
      input.resume();
      const finish = (v: string | null) => {
        input.off('data', onData);
        signal?.removeEventListener('abort', onAbort);
        input.setRawMode(wasRaw);
        input.pause();
        this.output.write('\n');
        resolve(v);
      };
      const onAbort = () => finish(null);
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n') return finish(value);
          if (ch === '\u0003') {
            finish(null);
            process.kill(process.pid, 'SIGINT');
            return;
          }
          if (ch === '\u0004') return finish(value.length ? value : null);
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else if (ch >= ' ') value += ch;
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      input.on('data', onData);
    });
  }

  /** Stops reading stdin so the process can exit. */
  close(): void {
    if (!this.rl) return;
    this.rl.close();
    if (!this.interactive) this.input.destroy();
  }
}

function prepend(first: Promise<IteratorResult<string>>, rest: AsyncIterator<string>): AsyncIterator<string> {
  let used = false;
  return {
    next: () => {
      if (!used) {
        used = true;
        return first;
      }
      return rest.next();
    },
  };
}
