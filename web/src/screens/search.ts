// Search: posts by their words (GET /api/search, newest first or best match, page by page), with
// suggestions while typing (GET /api/suggest) in a combobox: the list opens under the input, the
// arrow keys move through it, Enter picks, Escape closes. The query and order are in the address
// (`#/search?q=café&sort=relevance`), so a search can be bookmarked and Back returns to the last one.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describeError, withQuery, type Page, type Post, type Suggestion } from '../api';
import { PostList, ScreenTitle, announce, useFeed } from '../components';
import { plural } from '../format';
import { navigate, queryOf, usePath, withParams } from '../router';

export type SearchSort = 'recent' | 'relevance';

/** Typing pauses this long before suggestions are asked for. */
export const SUGGEST_DEBOUNCE_MS = 250;
const SUGGESTIONS = 8;
/** The server's bound on a prefix (after normalising); longer ones are not asked. */
const MAX_PREFIX = 100;

function SearchBox({ initial, sort, onSearch }: { initial: string; sort: SearchSort; onSearch: (q: string, sort: SearchSort) => void }) {
  const [text, setText] = useState(initial);
  const [typed, setTyped] = useState(0);
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [suggestError, setSuggestError] = useState<string | null>(null);
  const asked = useRef(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => setText(initial), [initial]);

  // Suggestions for what is typed, once typing pauses; an answer to an older prefix is dropped.
  useEffect(() => {
    if (typed === 0) return;
    const prefix = text.trim();
    const mine = ++asked.current;
    if (!prefix || [...prefix].length > MAX_PREFIX) {
      setSuggestions([]);
      setOpen(false);
      return;
    }
    const timer = window.setTimeout(() => {
      api.get<{ suggestions: Suggestion[] }>(withQuery('/api/suggest', { prefix, limit: SUGGESTIONS })).then(
        (r) => {
          if (mine !== asked.current) return;
          setSuggestError(null);
          setSuggestions(r.suggestions);
          setActive(-1);
          setOpen(r.suggestions.length > 0 && document.activeElement === input.current);
        },
        (err) => {
          if (mine !== asked.current) return;
          setSuggestions([]);
          setOpen(false);
          setSuggestError(`Suggestions are not available: ${describeError(err)}`);
        },
      );
    }, SUGGEST_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [typed]);

  function close() {
    setOpen(false);
    setActive(-1);
  }

  function pick(s: Suggestion) {
    asked.current++;
    setText(s.query);
    close();
    onSearch(s.query, sort);
  }

  function submit(e: Event) {
    e.preventDefault();
    asked.current++;
    close();
    const q = text.trim();
    if (q) onSearch(q, sort);
  }

  function onKeyDown(e: KeyboardEvent) {
    const n = suggestions.length;
    switch (e.key) {
      case 'ArrowDown':
        if (n === 0) return;
        e.preventDefault();
        if (!open) {
          setOpen(true);
          setActive(0);
        } else setActive((active + 1) % n);
        break;
      case 'ArrowUp':
        if (n === 0) return;
        e.preventDefault();
        if (!open) {
          setOpen(true);
          setActive(n - 1);
        } else setActive(active <= 0 ? n - 1 : active - 1);
        break;
      case 'Enter':
        if (open && active >= 0) {
          e.preventDefault();
          pick(suggestions[active]);
        }
        break;
      case 'Escape':
        if (open) {
          e.preventDefault();
          close();
        } else if (text) {
          e.preventDefault();
          setText('');
          setSuggestions([]);
        }
        break;
      case 'Tab':
        close();
        break;
    }
  }

  const showing = open && suggestions.length > 0;
  return html`<form role="search" class="card stack search-form" onSubmit=${submit} aria-label="Search posts">
    <div class="field combobox-field">
      <label for="search-input" id="search-label">Search posts</label>
      <div class="search-row">
        <div class="combobox">
          <input id="search-input" ref=${input} type="search" autocomplete="off" spellcheck="false"
            role="combobox" aria-autocomplete="list" aria-expanded=${showing ? 'true' : 'false'} aria-controls="search-suggestions"
            aria-activedescendant=${showing && active >= 0 ? `suggestion-${active}` : undefined}
            aria-describedby="search-hint"
            value=${text}
            onInput=${(e: Event) => {
              setText((e.target as HTMLInputElement).value);
              setTyped((n) => n + 1);
            }}
            onKeyDown=${onKeyDown}
            onBlur=${close} />
          <ul id="search-suggestions" role="listbox" aria-labelledby="search-label" class="suggestions" hidden=${!showing}>
            ${suggestions.map(
              (s, i) => html`<li id=${`suggestion-${i}`} role="option" aria-selected=${i === active ? 'true' : 'false'}
                class=${i === active ? 'active' : ''}
                onMouseDown=${(e: Event) => e.preventDefault()} onClick=${() => pick(s)}>${s.query}</li>`,
            )}
          </ul>
        </div>
        <button type="submit">Search</button>
      </div>
      <p id="search-hint" class="muted small">Every word must be in the post. Suggestions come from what people searched, yours too, and anyone may see them; choose one with the arrow keys and Enter.</p>
      <div class="visually-hidden" role="status">${showing ? `${plural(suggestions.length, 'suggestion')}.` : ''}</div>
      ${suggestError ? html`<p class="muted small">${suggestError}</p>` : null}
    </div>
    <fieldset class="sort">
      <legend>Order</legend>
      ${([['recent', 'Newest first'], ['relevance', 'Best match']] as const).map(
        ([value, label]) => html`<span class="radio">
          <input type="radio" name="sort" id=${'sort-' + value} value=${value} checked=${sort === value}
            onChange=${() => {
              const q = text.trim();
              if (q) onSearch(q, value);
              else navigate(withParams('/search', { sort: value }));
            }} />
          <label for=${'sort-' + value}>${label}</label>
        </span>`,
      )}
    </fieldset>
  </form>`;
}

export function Search() {
  const path = usePath();
  const params = queryOf(path);
  const q = (params.get('q') ?? '').trim();
  const sort: SearchSort = params.get('sort') === 'relevance' ? 'relevance' : 'recent';
  const key = `${sort}:${q}`;
  const currentKey = useRef(key);
  currentKey.current = key;
  const feed = useFeed<Post>(
    async (cursor) => {
      if (!q) return { items: [], next_cursor: null };
      const page = await api.get<Page<Post>>(withQuery('/api/search', { q, sort, limit: 20, cursor }));
      // Say how the first page went (the focus stays in the search box), unless another search
      // has started meanwhile.
      if (cursor === null && currentKey.current === key) {
        const n = page.items.length;
        announce(n === 0 ? `No posts match “${q}”.` : `${page.next_cursor ? `${n}+` : n} result${n === 1 ? '' : 's'} for “${q}”.`);
      }
      return page;
    },
    key,
  );

  return html`<div class="screen">
    <${ScreenTitle}>Search</${ScreenTitle}>
    <${SearchBox} initial=${q} sort=${sort} onSearch=${(query: string, s: SearchSort) => navigate(withParams('/search', { q: query, sort: s }))} />
    ${q
      ? html`<section aria-labelledby="results-title">
          <h2 id="results-title">Results for “${q}”</h2>
          <p class="muted small">${sort === 'recent' ? 'Newest first.' : 'Best match first (up to the best 1,000).'}</p>
          <${PostList} feed=${feed} empty=${`No posts match “${q}”.`} moreLabel="More results" endText="No more results." />
        </section>`
      : null}
  </div>`;
}
