/** `text` with the non-ASCII code units of its comments folded to ASCII; throws if any are left. */
export function asciiComments(text: string, name: string): string;
/** Folds every `.mjs` chunk in `dir`. */
export function asciiChunks(dir: string): void;
