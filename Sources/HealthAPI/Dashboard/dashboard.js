// The dashboard's shell: signing in (token and subject, kept in this tab's sessionStorage), the view buttons,
// range and time zone, drawing the current view, and live updates.
'use strict';

(function (HK) {
  const { el } = HK;
  const $ = (id) => document.getElementById(id);
  const states = {};
  let current = null;
  let shown = null;
  let loading = 0;

  const live = new HK.Live(() => show({ quiet: true }), (state) => {
    $('live').textContent = {
      live: 'Live: updates as samples arrive.',
      polling: 'Updating every few seconds.',
      reconnecting: 'Reconnecting…',
    }[state] || '';
  });

  function notice(text, isError) {
    const box = $('notice');
    box.textContent = text || '';
    box.classList.toggle('error', Boolean(isError));
  }

  function signedIn() {
    $('sign-in').hidden = true;
    $('controls').hidden = false;
    $('views').hidden = false;
    $('who').textContent = `Subject ${HK.session.subject}`;
    if (!HK.hasCharts()) {
      notice('Charts need Chart.js, which hkd could not find: install Debian’s libjs-chart.js (or start hkd with --chartjs PATH). The figures are shown as tables meanwhile.');
    }
    buildControls();
    select(HK.views.find((view) => view.id === HK.session.view) || HK.views[0]);
  }

  function signIn(message) {
    live.stop();
    live.followed = null;
    $('sign-in').hidden = false;
    $('controls').hidden = true;
    $('views').hidden = true;
    $('view').replaceChildren();
    $('who').textContent = '';
    $('subject').value = HK.session.subject;
    $('sign-in-error').textContent = message || '';
    $('token').focus();
  }

  function buildControls() {
    const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    const tz = HK.session.tz;
    const names = zones.includes(tz) ? zones : [tz, ...zones];
    $('tz').replaceChildren(...names.map((name) => el('option', { value: name, selected: name === tz }, name.replaceAll('_', ' '))));
    $('range').value = String(HK.session.range);
    const nav = $('views');
    nav.replaceChildren(...HK.views.map((view) => el('button', {
      type: 'button', dataset: { view: view.id }, onclick: () => select(view),
    }, view.title)));
  }

  function select(view) {
    current = view;
    shown = null;
    HK.session.set('view', view.id);
    for (const button of $('views').querySelectorAll('button')) {
      if (button.dataset.view === view.id) button.setAttribute('aria-current', 'page');
      else button.removeAttribute('aria-current');
    }
    show({ quiet: false });
  }

  function context() {
    const state = (states[current.id] = states[current.id] || {});
    return { days: HK.session.range, state, reload: () => show({ quiet: false }) };
  }

  /** Loads the current view and draws it; a quiet load (a live update) draws only when the data changed. */
  async function show({ quiet }) {
    if (!current) return;
    const view = current;
    const ticket = ++loading;
    const main = $('view');
    if (!quiet) main.setAttribute('aria-busy', 'true');
    let data;
    try {
      data = await view.load(context());
    } catch (error) {
      if (ticket !== loading) return;
      main.setAttribute('aria-busy', 'false');
      if (error instanceof HK.APIError && error.status === 401) return signIn('hkd refused the token: paste it again.');
      if (error instanceof HK.APIError && error.status === 403) {
        main.replaceChildren(el('p', { class: 'error' }, `This token may not read that for subject ${HK.session.subject}: ${error.message}`));
      } else {
        main.replaceChildren(el('p', { class: 'error' }, `Could not load ${view.title.toLowerCase()}: ${error.message}`));
      }
      return;
    }
    if (ticket !== loading || view !== current) return;
    const text = JSON.stringify([HK.session.tz, HK.session.range, data]);
    const changed = text !== shown;
    shown = text;
    if (changed) {
      const ctx = context();
      const focused = document.activeElement && main.contains(document.activeElement) ? document.activeElement : null;
      const heading = el('h2', {}, `${view.title} · ${rangeName()} · ${HK.session.tz.replaceAll('_', ' ')}`);
      main.replaceChildren(heading, view.render(data, ctx));
      main.dataset.view = view.id;
      main.dataset.updated = String(Date.now());
      if (focused && !quiet) main.focus();
    }
    main.setAttribute('aria-busy', 'false');
    main.dataset.loaded = String(ticket);
    const types = view.types(context().state);
    if (live.followed !== types.join(',')) {
      live.followed = types.join(',');
      live.follow(types);
    }
  }

  function rangeName() {
    return $('range').selectedOptions[0].textContent;
  }

  function start() {
    HK.session.readFragment();
    $('sign-in').addEventListener('submit', (event) => {
      event.preventDefault();
      HK.session.set('token', $('token').value.trim());
      HK.session.set('subject', $('subject').value.trim() || 'me');
      $('token').value = '';
      signedIn();
    });
    $('sign-out').addEventListener('click', () => {
      HK.session.signOut();
      signIn('Signed out: the token is forgotten in this tab.');
    });
    $('range').addEventListener('change', (event) => {
      HK.session.set('range', event.target.value);
      show({ quiet: false });
    });
    $('tz').addEventListener('change', (event) => {
      HK.session.set('tz', event.target.value);
      show({ quiet: false });
    });
    // Light and dark follow the system: charts take their colours anew.
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      shown = null;
      show({ quiet: true });
    });
    if (HK.session.token) signedIn();
    else signIn();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})(window.HK);
