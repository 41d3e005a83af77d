// The dashboard's access to hkd: the session (token, subject, time zone), /v1 requests with the token as
// `Authorization: Bearer`, and live updates. The token lives in sessionStorage only (this tab), never in a
// cookie or a URL hkd sees: a link may carry it in the fragment (#token=…&subject=…), which the browser never
// sends, and the page removes it from the address bar at once.
'use strict';

window.HK = window.HK || {};

(function (HK) {
  const keys = { token: 'hkd.token', subject: 'hkd.subject', tz: 'hkd.tz', view: 'hkd.view', range: 'hkd.range' };

  /** The browser's own time zone, the default. */
  function browserZone() {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  }

  HK.session = {
    get token() { return sessionStorage.getItem(keys.token); },
    get subject() { return sessionStorage.getItem(keys.subject) || 'me'; },
    get tz() { return sessionStorage.getItem(keys.tz) || browserZone(); },
    get view() { return sessionStorage.getItem(keys.view); },
    get range() { return Number(sessionStorage.getItem(keys.range) || 7); },
    set(name, value) {
      if (value === null || value === undefined || value === '') sessionStorage.removeItem(keys[name]);
      else sessionStorage.setItem(keys[name], String(value));
    },
    /** Takes token, subject, tz and view from the URL fragment, then removes the fragment from the address bar. */
    readFragment() {
      if (location.hash.length < 2) return;
      const given = new URLSearchParams(location.hash.slice(1));
      for (const name of ['token', 'subject', 'tz', 'view', 'range']) {
        if (given.has(name)) this.set(name, given.get(name));
      }
      history.replaceState(null, '', location.pathname + location.search);
    },
    signOut() {
      for (const name of Object.keys(keys)) sessionStorage.removeItem(keys[name]);
    },
  };

  /** A refusal from hkd: the HTTP status and the RFC 9457 problem document. */
  class APIError extends Error {
    constructor(status, problem) {
      super(problem && problem.detail ? problem.detail : `HTTP ${status}`);
      this.status = status;
      this.problem = problem || {};
    }
  }
  HK.APIError = APIError;

  /** The path of a resource of the session's subject: `subjects/anna/collection`. */
  HK.subjectPath = function (resource) {
    return `subjects/${encodeURIComponent(HK.session.subject)}/${resource}`;
  };

  /**
   * GET /v1/PATH?PARAMS as JSON (hkq's --format json, docs/OUTPUT.md); `null` when hkd has no data for the query
   * (404 noData). Throws an APIError otherwise.
   */
  HK.get = async function (path, params) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null) query.append(name, value);
    }
    const response = await fetch(`/v1/${path}?${query}`, {
      headers: { Authorization: `Bearer ${HK.session.token}`, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
    });
    if (response.ok) return response.json();
    let problem = null;
    try { problem = await response.json(); } catch (_) { /* not a problem document */ }
    if (response.status === 404 && problem && problem.name === 'noData') return null;
    throw new APIError(response.status, problem);
  };

  /**
   * Live updates for a set of types: `onChange` is called (at most every 250 ms) when samples of them change.
   * Reads `GET /v1/subjects/{subject}/events?type=…` (Server-Sent Events) through fetch() and a stream reader, as
   * EventSource cannot send the token in a header; it resumes after a lost connection from the last event's id
   * (`Last-Event-ID`), also after an `end` event (hkd stopping, the subject moving to another node). Where hkd
   * has no events resource, it asks again every `pollSeconds` instead, and `onChange` sees whether anything
   * differs through the view's own comparison.
   */
  HK.Live = class {
    constructor(onChange, onState) {
      this.onChange = onChange;
      this.onState = onState || (() => {});
      this.generation = 0;
      this.pollSeconds = 2;
    }

    /** Follows `types` (identifiers), ending whatever was followed before. */
    follow(types) {
      this.stop();
      const generation = ++this.generation;
      if (!types.length) return;
      if (this.noEvents) return this.poll(generation);
      this.stream(types, generation, null).catch(() => {});
    }

    stop() {
      this.generation++;
      if (this.controller) this.controller.abort();
      this.controller = null;
      clearTimeout(this.timer);
    }

    get current() { return this.generation; }

    changed() {
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => this.onChange(), 250);
    }

    async stream(types, generation, lastID) {
      const controller = new AbortController();
      this.controller = controller;
      const headers = { Authorization: `Bearer ${HK.session.token}`, Accept: 'text/event-stream' };
      if (lastID) headers['Last-Event-ID'] = lastID;
      let response;
      try {
        response = await fetch(`/v1/${HK.subjectPath('events')}?${new URLSearchParams({ type: types.join(',') })}`, {
          headers, cache: 'no-store', credentials: 'omit', signal: controller.signal,
        });
      } catch (_) {
        return this.retry(types, generation, lastID);
      }
      if (generation !== this.generation) return;
      const isStream = response.ok && (response.headers.get('Content-Type') || '').startsWith('text/event-stream');
      if (!isStream) {
        if (response.body) response.body.cancel().catch(() => {});
        // No events resource on this hkd (404: not asked again from this page), or it refused: ask on a timer.
        if (response.status === 404) this.noEvents = true;
        return this.poll(generation);
      }
      this.onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let event = { type: 'message', id: null, data: [] };
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
            const line = buffer.slice(0, end);
            buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
            if (line === '') {
              // An `end` event says why the stream ends (hkd stops, the subject moved): reconnect below.
              if (event.data.length && event.type !== 'end') {
                if (event.id !== null) lastID = event.id;
                this.changed();
              }
              event = { type: 'message', id: null, data: [] };
            } else if (!line.startsWith(':')) {
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'data') event.data.push(text);
              else if (field === 'id') event.id = text;
              else if (field === 'event') event.type = text;
            }
          }
        }
      } catch (_) { /* aborted or cut: reconnect below */ }
      this.retry(types, generation, lastID);
    }

    retry(types, generation, lastID) {
      if (generation !== this.generation) return;
      this.onState('reconnecting');
      this.timer = setTimeout(() => this.stream(types, generation, lastID).catch(() => {}), 1000);
    }

    poll(generation) {
      if (generation !== this.generation) return;
      this.onState('polling');
      this.timer = setTimeout(() => {
        if (generation !== this.generation) return;
        if (document.visibilityState === 'visible') this.onChange();
        this.poll(generation);
      }, this.pollSeconds * 1000);
    }
  };
})(window.HK);
