/**
 * The POSIX-shell words of a crontab command, as far as cronix can take them without a shell.
 * Pure. cron runs every command through `/bin/sh -c`; a command made of plain words (quotes and
 * backslashes allowed) means the same run without a shell, while anything the shell would
 * interpret (pipes, redirections, `$` expansions, globs, `;`, `&&`, backticks, `~`, comments)
 * makes {@link splitShellWords} report `needsShell`, and the importer keeps `/bin/sh -c`.
 */

/** Result of {@link splitShellWords}. */
export interface ShellWords {
  /** The words after quote removal (meaningful only when `needsShell` is false). */
  words: string[];
  /** The command uses something only a shell does. */
  needsShell: boolean;
}

const SPECIAL = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`', '{', '}']);

/** Pathname-expansion characters: special only in a word the shell could match to files. */
const GLOB = new Set(['*', '?', '[', ']']);

/**
 * A word starting `http://` or `https://`: its `?`, `*`, `[` and `]` are part of a URL (a query
 * string, mostly), and a shell would only expand them if a file path matched `https:/…`, which
 * does not happen. Taking them as globs made every `wget -qO- https://host/run?kind=daily` a
 * shell command instead of an HTTP job.
 */
const URL_WORD = /^https?:\/\//i;

/** Splits `command` into words; unterminated quotes also report `needsShell`. */
export function splitShellWords(command: string): ShellWords {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let needsShell = false;
  // an unquoted glob character in the current word (harmless in a URL, see URL_WORD)
  let glob = false;
  const endWord = (): void => {
    if (glob && !URL_WORD.test(word)) needsShell = true;
    words.push(word);
    glob = false;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (c === ' ' || c === '\t') {
      if (inWord) endWord();
      word = '';
      inWord = false;
      continue;
    }
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return { words, needsShell: true };
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const d = command[j] as string;
        if (d === '$' || d === '`') needsShell = true;
        if (d === '\\' && j + 1 < command.length && '$`"\\\n'.includes(command[j + 1] as string)) {
          j++;
          word += command[j];
        } else word += d;
      }
      if (j >= command.length) return { words, needsShell: true };
      inWord = true;
      i = j;
      continue;
    }
    if (c === '\\') {
      if (i + 1 < command.length) word += command[++i];
      inWord = true;
      continue;
    }
    if (SPECIAL.has(c) || (!inWord && (c === '#' || c === '~'))) needsShell = true;
    if (GLOB.has(c)) glob = true;
    word += c;
    inWord = true;
  }
  if (inWord) endWord();
  return { words, needsShell };
}

/** Output redirections to /dev/null at the end of a command, which an HTTP job does not need. */
const DEVNULL_TAIL =
  /(?:\s+(?:[12]?>>?\s*\/dev\/null|&>>?\s*\/dev\/null|2>&1|>\s*\/dev\/null\s+2>&1))+\s*$/;

/** `command` without trailing redirections of its output to /dev/null, and whether there were any. */
export function stripDevNull(command: string): { command: string; stripped: boolean } {
  const out = command.replace(DEVNULL_TAIL, '');
  return { command: out, stripped: out !== command };
}
