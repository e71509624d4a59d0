/** A tiny path router: the daemon serves index.html for every page path. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

/** Goes to a page without reloading. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const f of listeners) f();
  window.scrollTo(0, 0);
}

/** The current location (path and query), re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const f = () => setTick((t) => t + 1);
    listeners.add(f);
    window.addEventListener('popstate', f);
    return () => {
      listeners.delete(f);
      window.removeEventListener('popstate', f);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** A link that navigates in the app (modified clicks open a new tab as usual). */
export function Link({
  href,
  children,
  class: cls,
}: {
  href: string;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <a
      href={href}
      class={cls}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** The address of a job's page. */
export const jobPath = (app: string, job: string): string =>
  `/jobs/${encodeURIComponent(app)}/${encodeURIComponent(job)}`;

/** Matches `/jobs/:app/:job`-style patterns; decoded params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.replace(/\/+$/, '').split('/');
  if (path === '/' && pattern === '/') return {};
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const a = p[i] as string;
    const b = s[i] as string;
    if (a.startsWith(':')) {
      if (b === '') return null;
      try {
        out[a.slice(1)] = decodeURIComponent(b);
      } catch {
        return null;
      }
    } else if (a !== b) return null;
  }
  return out;
}
