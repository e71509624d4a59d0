/**
 * Render-only mode of the Kubernetes backend (`--k8s-render [FILE]`), for GitOps: instead of
 * calling the API server, `apply` writes the objects as multi-document YAML.
 *
 * - To stdout (`--k8s-render` alone): nothing is "installed", so `list` is empty and `apply`
 *   prints every created/updated entry (a plan of a fresh render creates them all).
 * - To a file: the file is the target. `list` reads our documents back (marker labels, like
 *   the API mode); `apply` replaces our documents and keeps every other document of the file
 *   byte for byte, then replaces the file atomically, and only when its content changes.
 */
import { readFileSync } from 'node:fs';
import type { V1ConfigMap, V1CronJob } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { writeFileAtomic } from '../../io/atomic.js';
import {
  BackendWriteError,
  type ChangeSet,
  type DesiredEntry,
  type OwnedEntry,
} from '../backend.js';
import { decodeMarker, modifiedReason } from './kubernetes-marker.js';
import {
  RENDER_HEADER,
  refuseKubernetes,
  renderYaml,
  type KubernetesBackend,
  type KubernetesBackendDeps,
  type KubernetesRenderOptions,
} from './kubernetes-render.js';

const SEPARATOR = /^---[ \t]*$/m;

interface Chunk {
  /** The document's text, verbatim. */
  text: string;
  /** The parsed object, when the chunk holds one. */
  object?: { kind?: unknown; metadata?: V1CronJob['metadata'] };
}

/** Splits a YAML stream on its `---` lines; a chunk that does not parse is kept as text. */
function readChunks(text: string): Chunk[] {
  return text
    .split(SEPARATOR)
    .filter((t) => t.trim() !== '')
    .map((t) => {
      try {
        const object: unknown = parse(t);
        return typeof object === 'object' && object !== null
          ? { text: t, object: object as Chunk['object'] }
          : { text: t };
      } catch {
        return { text: t };
      }
    });
}

/** A chunk as one document of the stream: `---`, the text verbatim, a final newline. */
const asDocument = (text: string): string =>
  `---${text.startsWith('\n') ? '' : '\n'}${text}${text.endsWith('\n') ? '' : '\n'}`;

const isOurs = (c: Chunk): boolean =>
  (c.object?.kind === 'CronJob' || c.object?.kind === 'ConfigMap') &&
  decodeMarker(c.object.metadata) !== null;

function readTarget(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new BackendWriteError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

function listFile(path: string, flags: KubernetesRenderOptions, app?: string): OwnedEntry[] {
  const ours = readChunks(readTarget(path)).filter(isOurs);
  const byKind = (kind: string): Map<string, Chunk['object']> =>
    new Map(
      ours
        .filter((c) => c.object?.kind === kind)
        .map((c) => [c.object?.metadata?.name ?? '', c.object]),
    );
  const cronJobs = byKind('CronJob');
  const configMaps = byKind('ConfigMap');
  const out: OwnedEntry[] = [];
  for (const name of new Set([...cronJobs.keys(), ...configMaps.keys()])) {
    const cj = cronJobs.get(name) as V1CronJob | undefined;
    const cm = configMaps.get(name) as V1ConfigMap | undefined;
    const marker = decodeMarker((cj ?? cm)?.metadata);
    if (marker === null || (app !== undefined && marker.app !== app)) continue;
    const modified = modifiedReason(marker, cj, cm, flags);
    out.push(modified === undefined ? marker : { ...marker, modified });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function applyFile(path: string, flags: KubernetesRenderOptions, changes: ChangeSet): void {
  const before = readTarget(path);
  const chunks = readChunks(before);
  const isHeader = (c: Chunk): boolean =>
    c.object === undefined && c.text.trim().startsWith(RENDER_HEADER.trim());
  const foreign = chunks.filter((c) => !isOurs(c) && !isHeader(c));
  const drop = new Set(
    [...changes.deletes, ...changes.updates, ...changes.creates].map((e) => e.id),
  );
  const kept = chunks.filter((c) => isOurs(c) && !drop.has(c.object?.metadata?.name ?? ''));
  const fresh = [...changes.updates, ...changes.creates].map((e) => ({ id: e.id, entry: e }));
  const ids = [
    ...new Set([...kept.map((c) => c.object?.metadata?.name ?? ''), ...fresh.map((f) => f.id)]),
  ].sort();
  const docs: string[] = [];
  for (const id of ids) {
    const entry = fresh.find((f) => f.id === id)?.entry;
    if (entry !== undefined) {
      docs.push(renderYaml([entry], flags).replace(/^#.*\n/, ''));
      continue;
    }
    for (const kind of ['ConfigMap', 'CronJob']) {
      const c = kept.find((k) => k.object?.metadata?.name === id && k.object?.kind === kind);
      if (c !== undefined) docs.push(asDocument(c.text));
    }
  }
  const foreignText = foreign.map((c) => asDocument(c.text)).join('');
  const text = renderYaml([], flags) + foreignText + docs.join('');
  if (text === before) return;
  try {
    writeFileAtomic(path, text, 0o644);
  } catch (err) {
    throw new BackendWriteError(`cannot write ${path}: ${(err as Error).message}`);
  }
}

/**
 * The render-only backend of `--k8s-render`: writes to `file`, or to stdout when undefined.
 * `flags` are the render options (namespace only when `--k8s-namespace` was given).
 */
export function createRenderBackend(
  flags: KubernetesRenderOptions,
  file: string | undefined,
  deps: KubernetesBackendDeps = {},
): KubernetesBackend {
  const now = deps.now ?? Date.now;
  const stdout = deps.stdout ?? process.stdout;
  const render = (entries: readonly DesiredEntry[]): string => renderYaml(entries, flags);
  return {
    name: 'kubernetes',
    target: file !== undefined ? `YAML file ${file}` : 'YAML on stdout',
    writesStdout: file === undefined,
    localSpecFiles: false,
    refuse: (entry) => refuseKubernetes(entry, flags, now()),
    renderYaml: render,
    list: async (app) => (file === undefined ? [] : listFile(file, flags, app)),
    apply: async (changes) => {
      const written = [...changes.updates, ...changes.creates];
      if (written.length + changes.deletes.length === 0) return;
      if (file !== undefined) applyFile(file, flags, changes);
      else stdout.write(render(written));
    },
  };
}
