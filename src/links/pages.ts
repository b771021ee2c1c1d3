// The answers of GET and POST /{code} that are pages or fixed JSON, built once: the redirect path
// sends them as they are. The password form names no target and posts back to the page's own
// address (a form without an action submits to the document's URL).

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">` +
    `<h1>${title}</h1>${body}</body></html>`;
}

function passwordForm(note: string): string {
  return page(
    'This link is protected',
    note +
      '<p>Enter the password to continue.</p>' +
      '<form method="post">' +
      '<label for="password">Password</label><br>' +
      '<input id="password" name="password" type="password" required minlength="4" maxlength="128" autocomplete="current-password" autofocus ' +
      'style="font-size:1rem;padding:.4rem;margin:.4rem 0;width:100%;box-sizing:border-box"><br>' +
      '<button type="submit" style="font-size:1rem;padding:.4rem 1rem">Continue</button>' +
      '</form>',
  );
}

export const GONE_HTML = page('This link has expired', '<p>The short link you followed has expired and no longer leads anywhere.</p>');
export const NOT_FOUND_HTML = page('Link not found', '<p>There is no short link at this address. It may have been deleted, or the address was mistyped.</p>');
export const PASSWORD_FORM_HTML = passwordForm('');
export const PASSWORD_WRONG_HTML = passwordForm('<p role="alert"><strong>That password is not right.</strong></p>');
export const TOO_MANY_GUESSES_HTML = page('Too many attempts', '<p>Too many wrong passwords were sent for this link from your address. Try again in a minute.</p>');

export const GONE_JSON = JSON.stringify({ error: 'gone', message: 'This link has expired.' });
export const NOT_FOUND_JSON = JSON.stringify({ error: 'not_found', message: 'No link has this code.' });
export const PASSWORD_REQUIRED_JSON = JSON.stringify({ error: 'password_required', message: 'This link is protected by a password.' });
export const PASSWORD_WRONG_JSON = JSON.stringify({ error: 'password_required', message: 'The password is not right.' });

export const HTML_TYPE = 'text/html; charset=utf-8';
/**
 * The policy of these pages: nothing loads, no script runs, their own inline styles apply, and no
 * other site may frame them (a password form in a frame can be covered and clicked through). No
 * `form-action`: browsers apply it to the redirect that answers the form, which leads to the
 * link's target, anywhere.
 */
export const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
/** The headers of every page here, beside its type. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': PAGE_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};
export const JSON_TYPE = 'application/json';
export const NO_STORE = 'private, no-store';
