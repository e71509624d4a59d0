/**
 * Text bound for a terminal with its control characters made visible (SPEC §9 item 9: "control
 * characters never reach a terminal raw"). A manifest key, a job's error or a command's output
 * can carry ESC sequences that clear the screen, retitle the window, rewrite earlier lines or
 * (on some terminals) answer back into the input; written as `\x1b` they do nothing.
 *
 * Escaped: C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F, which
 * some terminals obey as 8-bit CSI/OSC), each as `\xHH`. In `lines` mode a line feed, a tab
 * and the CR of a CRLF pair stay as they are (they belong in command output); in `line` mode
 * (one log line) nothing does.
 */

/** Whether line feeds, tabs and CRLF stay (`lines`) or are escaped too (`line`). */
export type EscapeMode = 'line' | 'lines';

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_LINES = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

const hex = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** `text` with its control characters written as `\xHH` (see the module comment). */
export function escapeControls(text: string, mode: EscapeMode = 'line'): string {
  return text.replace(mode === 'line' ? CONTROLS : CONTROLS_BUT_LINES, hex);
}

/**
 * Escapes a byte stream chunk by chunk (`cronix logs`): UTF-8 is decoded across chunk
 * boundaries (invalid bytes become U+FFFD), and a CR at the end of a chunk waits for the next
 * one, to see whether an LF follows it.
 */
export class TerminalEscaper {
  private readonly decoder = new TextDecoder('utf-8');
  private heldCr = false;

  /** The escaped text of the next chunk. */
  push(chunk: Uint8Array): string {
    return this.take(this.decoder.decode(chunk, { stream: true }));
  }

  /** What is left at the end of the stream. */
  end(): string {
    const text = this.take(this.decoder.decode());
    if (!this.heldCr) return text;
    this.heldCr = false;
    return `${text}\\x0d`;
  }

  private take(decoded: string): string {
    let text = (this.heldCr ? '\r' : '') + decoded;
    this.heldCr = text.endsWith('\r');
    if (this.heldCr) text = text.slice(0, -1);
    return escapeControls(text, 'lines');
  }
}
