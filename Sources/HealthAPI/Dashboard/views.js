// The dashboard's views. Each has `load(context)`, which asks /v1 for what it shows (buckets, nights and days
// come from hkd in the chosen time zone, so they are DST-correct), and `render(data, context)`, which builds its
// element; `types` are what live updates follow. `context` holds the range in days, the view's own `state` (its
// controls) and `reload()`.
'use strict';

(function (HK) {
  const { el, format } = HK;

  /** The local date `days` after `date` (both `YYYY-MM-DD`): calendar arithmetic, whatever DST does. */
  function addDays(date, days) {
    const [year, month, day] = date.split('-').map(Number);
    return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
  }

  /** Today's date in the session's time zone. */
  function today() {
    const parts = new Intl.DateTimeFormat('en-CA', { timeZone: HK.session.tz, year: 'numeric', month: '2-digit', day: '2-digit' })
      .formatToParts(new Date());
    const part = (type) => parts.find((p) => p.type === type).value;
    return `${part('year')}-${part('month')}-${part('day')}`;
  }

  /** The query's span for the last `days` days (today alone for 1): hkq's own words, read in `tz` by hkd. */
  function span(days) {
    return { from: days <= 1 ? 'today' : `today-${days - 1}d`, to: 'tomorrow' };
  }

  /** A collection's buckets for the last `days` days: from the one holding the first day's start through the
   *  one holding now (a collection's `to` would name a bucket to list, tomorrow's). */
  function bucketSpan(days) {
    return { from: days <= 1 ? 'today' : `today-${days - 1}d`, through: 'now' };
  }

  function rangeText(days) {
    return days <= 1 ? 'today' : `in the last ${format.number(days)} days`;
  }

  /** The values of `key` in `rows`, `null` where missing. */
  const column = (rows, key, scale = 1) => rows.map((row) => (row[key] === null || row[key] === undefined ? null : row[key] / scale));
  const sum = (values) => values.reduce((total, value) => total + (value || 0), 0);
  const present = (values) => values.filter((value) => value !== null && value !== undefined);

  /** A bucket's label: its hour for hourly buckets, else its day. */
  function bucketLabel(start, days) {
    return days <= 1 ? format.hour(start) : format.day(start);
  }

  const activityMetrics = [
    { type: 'stepCount', title: 'Steps', unit: 'count', shown: 'steps', digits: 0 },
    { type: 'distanceWalkingRunning', title: 'Walking + running distance', unit: 'km', shown: 'km', digits: 2 },
    { type: 'activeEnergyBurned', title: 'Active energy', unit: 'kcal', shown: 'kcal', digits: 0 },
  ];

  const activity = {
    id: 'activity',
    title: 'Activity',
    types: () => activityMetrics.map((metric) => metric.type),
    async load({ days, state }) {
      const bySource = state.bySource || {};
      return Promise.all(activityMetrics.map((metric) => HK.get(HK.subjectPath('collection'), {
        type: metric.type, interval: days <= 1 ? '1h' : '1d', tz: HK.session.tz, unit: metric.unit,
        options: bySource[metric.type] ? 'sum,by-source' : 'sum', ...bucketSpan(days),
      })));
    },
    render(results, { days, state, reload }) {
      const grid = el('div', { class: 'grid' });
      activityMetrics.forEach((metric, index) => {
        const buckets = results[index] || [];
        const sums = column(buckets, 'sum');
        const card = el('section', { class: 'card', dataset: { type: metric.type }, 'aria-label': metric.title });
        card.append(el('h3', {}, metric.title));
        if (!present(sums).length) {
          card.append(HK.empty(`No ${metric.title.toLowerCase()} ${rangeText(days)}.`));
          grid.append(card);
          return;
        }
        const total = sum(sums);
        card.append(el('p', { class: 'figure', dataset: { total } }, format.number(total, metric.digits), ' ',
          el('small', {}, metric.shown)));
        card.append(el('p', { class: 'sub' }, days <= 1 ? 'today, merged across sources'
          : `${rangeText(days)}, ${format.number(total / buckets.length, metric.digits)} ${metric.shown} a day on average, merged across sources`));
        const series = [{ label: 'All sources', values: sums, unit: metric.shown, digits: metric.digits }];
        const shownBySource = Boolean((state.bySource || {})[metric.type]);
        if (shownBySource) {
          const names = [...new Set(buckets.flatMap((bucket) => (bucket.sources || []).map((source) => source.source)))];
          for (const name of names) {
            series.push({
              label: name, unit: metric.shown, digits: metric.digits,
              values: buckets.map((bucket) => {
                const source = (bucket.sources || []).find((entry) => entry.source === name);
                return source ? source.sum : null;
              }),
            });
          }
        }
        const peak = Math.max(...present(sums));
        card.append(HK.chart({
          name: metric.type,
          title: `${metric.title} per ${days <= 1 ? 'hour' : 'day'} (${metric.shown})`,
          summary: `Total ${format.number(total, metric.digits)} ${metric.shown}; highest ${format.number(peak, metric.digits)}.`,
          kind: 'bar', keyTitle: days <= 1 ? 'Hour' : 'Day',
          labels: buckets.map((bucket) => bucketLabel(bucket.start, days)),
          keys: buckets.map((bucket) => bucket.start),
          series,
        }));
        const toggle = el('button', {
          type: 'button', 'aria-pressed': String(shownBySource),
          onclick: () => {
            state.bySource = { ...(state.bySource || {}), [metric.type]: !shownBySource };
            reload();
          },
        }, 'By source');
        card.append(el('div', { class: 'actions' }, toggle,
          shownBySource ? el('span', { class: 'sub' }, 'Each source counted alone; the total counts overlaps once (HealthKit’s source priority).') : null));
        grid.append(card);
      });
      return grid;
    },
  };

  const heart = {
    id: 'heart',
    title: 'Heart',
    types: () => ['heartRate', 'restingHeartRate'],
    async load({ days, state }) {
      const interval = days <= 1 ? '1h' : '1d';
      const [rates, resting] = await Promise.all([
        HK.get(HK.subjectPath('collection'), { type: 'heartRate', interval, tz: HK.session.tz, options: 'min,avg,max', ...bucketSpan(days) }),
        HK.get(HK.subjectPath('collection'), { type: 'restingHeartRate', interval: '1d', tz: HK.session.tz, options: 'avg', ...bucketSpan(days) }),
      ]);
      const withData = (rates || []).filter((bucket) => bucket.average !== null);
      const day = state.day || (withData.length ? withData[withData.length - 1].start.slice(0, 10) : today());
      const curve = await HK.get(HK.subjectPath('samples'), { type: 'heartRate', tz: HK.session.tz, from: day, to: addDays(day, 1) });
      return { rates: rates || [], resting: resting || [], day, curve: curve || [] };
    },
    render({ rates, resting, day, curve }, { days, state, reload }) {
      const grid = el('div', { class: 'grid' });
      const range = el('section', { class: 'card', 'aria-label': 'Heart rate' }, el('h3', {}, 'Heart rate'));
      if (!present(column(rates, 'average')).length) {
        range.append(HK.empty(`No heart rate ${rangeText(days)}.`));
      } else {
        const averages = present(column(rates, 'average'));
        range.append(el('p', { class: 'figure' }, format.number(Math.min(...present(column(rates, 'minimum')))), '–',
          format.number(Math.max(...present(column(rates, 'maximum')))), ' ', el('small', {}, 'bpm')));
        range.append(el('p', { class: 'sub' }, `lowest to highest ${rangeText(days)}`));
        range.append(HK.chart({
          name: 'heartRate', kind: 'line', keyTitle: days <= 1 ? 'Hour' : 'Day',
          title: `Heart rate per ${days <= 1 ? 'hour' : 'day'}: minimum, average, maximum (bpm)`,
          summary: `Average between ${format.number(Math.min(...averages))} and ${format.number(Math.max(...averages))} bpm.`,
          labels: rates.map((bucket) => bucketLabel(bucket.start, days)), keys: rates.map((bucket) => bucket.start),
          beginAtZero: false,
          series: [
            { label: 'Minimum', values: column(rates, 'minimum'), unit: 'bpm', digits: 0 },
            { label: 'Average', values: column(rates, 'average'), unit: 'bpm', digits: 0 },
            { label: 'Maximum', values: column(rates, 'maximum'), unit: 'bpm', digits: 0 },
          ],
        }));
      }
      grid.append(range);

      const rest = el('section', { class: 'card', 'aria-label': 'Resting heart rate' }, el('h3', {}, 'Resting heart rate'));
      const restValues = column(resting, 'average');
      if (!present(restValues).length) {
        rest.append(HK.empty(`No resting heart rate ${rangeText(days)}.`, 'An Apple Watch records it each day; import your Health export with hkq import export.zip.'));
      } else {
        const latest = present(restValues).at(-1);
        rest.append(el('p', { class: 'figure' }, format.number(latest), ' ', el('small', {}, 'bpm, latest')));
        rest.append(HK.chart({
          name: 'restingHeartRate', kind: 'line', keyTitle: 'Day', beginAtZero: false,
          title: 'Resting heart rate per day (bpm)', summary: `Latest ${format.number(latest)} bpm.`,
          labels: resting.map((bucket) => format.day(bucket.start)), keys: resting.map((bucket) => bucket.start),
          series: [{ label: 'Resting', values: restValues, unit: 'bpm', digits: 0 }],
        }));
      }
      grid.append(rest);

      const dayCard = el('section', { class: 'card', 'aria-label': 'One day of heart rate' }, el('h3', {}, 'One day'));
      const picker = el('input', {
        type: 'date', value: day, 'aria-label': 'Day shown',
        onchange: (event) => { state.day = event.target.value || null; reload(); },
      });
      dayCard.append(el('div', { class: 'actions' }, el('label', {}, 'Day ', picker)));
      if (!curve.length) {
        dayCard.append(HK.empty(`No heart rate on ${format.calendarDate(day)}.`));
      } else {
        dayCard.append(HK.chart({
          name: 'heartRateDay', kind: 'line', keyTitle: 'Time', beginAtZero: false, tall: true,
          title: `Heart rate on ${format.calendarDate(day, { weekday: 'long', day: 'numeric', month: 'long' })} (bpm)`,
          summary: `${format.number(curve.length)} readings from ${format.number(Math.min(...curve.map((s) => s.value)))} to ${format.number(Math.max(...curve.map((s) => s.value)))} bpm.`,
          labels: curve.map((sample) => format.hour(sample.start)), keys: curve.map((sample) => sample.start),
          series: [{ label: 'Heart rate', values: curve.map((sample) => sample.value), unit: 'bpm', digits: 0 }],
        }));
      }
      grid.append(dayCard);
      return grid;
    },
  };

  const sleepStages = [
    { key: 'asleepDeep', label: 'Deep' },
    { key: 'asleepCore', label: 'Core' },
    { key: 'asleepREM', label: 'REM' },
    { key: 'asleepUnspecified', label: 'Asleep' },
    { key: 'awake', label: 'Awake' },
    { key: 'inBedOnly', label: 'In bed' },
  ];

  const sleep = {
    id: 'sleep',
    title: 'Sleep',
    types: () => ['sleepAnalysis'],
    async load({ days }) {
      const nights = Math.max(days, 7);
      return (await HK.get(HK.subjectPath('sleep'), { from: `today-${nights - 1}d`, through: 'today', tz: HK.session.tz })) || [];
    },
    render(nights, { days }) {
      const card = el('section', { class: 'card', 'aria-label': 'Sleep' }, el('h3', {}, 'Sleep per night'));
      const slept = nights.filter((night) => night.inBed !== null);
      if (!slept.length) {
        card.append(HK.empty(`No sleep in the last ${format.number(Math.max(days, 7))} nights.`));
        return card;
      }
      const average = sum(column(slept, 'asleep')) / slept.length;
      card.append(el('p', { class: 'figure' }, format.duration(average), ' ', el('small', {}, 'asleep a night on average')));
      const last = slept.at(-1);
      card.append(el('p', { class: 'sub' }, `Night to ${format.calendarDate(last.night)}: ${format.duration(last.asleep)} asleep, ${format.duration(last.inBed)} in bed (sources merged by priority).`));
      card.append(HK.chart({
        name: 'sleep', kind: 'bar', stacked: true, tall: true, keyTitle: 'Night',
        title: 'Sleep stages per night (hours)',
        summary: `${slept.length} nights with sleep; ${format.duration(average)} asleep on average.`,
        labels: nights.map((night) => format.calendarDate(night.night)), keys: nights.map((night) => night.night),
        series: sleepStages.map((stage) => ({
          label: stage.label, values: column(nights, stage.key, 3600), unit: 'h', digits: 2,
          format: (hours) => (hours === null ? '–' : format.duration(hours * 3600)),
        })),
      }));
      return card;
    },
  };

  /** A route's points as an SVG path: longitude scaled by the cosine of the latitude, north up, fitted to the box. */
  function routeDrawing(points, label) {
    const width = 600;
    const height = 280;
    const latitudes = points.map((p) => p.latitude);
    const middle = (Math.min(...latitudes) + Math.max(...latitudes)) / 2;
    const scaleX = Math.cos((middle * Math.PI) / 180);
    const xs = points.map((p) => p.longitude * scaleX);
    const ys = points.map((p) => -p.latitude);
    const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const scale = Math.min((width - 40) / (maxX - minX || 1e-9), (height - 40) / (maxY - minY || 1e-9));
    const offsetX = (width - (maxX - minX) * scale) / 2;
    const offsetY = (height - (maxY - minY) * scale) / 2;
    const at = (index) => [(xs[index] - minX) * scale + offsetX, (ys[index] - minY) * scale + offsetY].map((v) => v.toFixed(1));
    let d = '';
    points.forEach((point, index) => {
      const [x, y] = at(index);
      d += `${index === 0 || point.route !== points[index - 1].route ? 'M' : 'L'}${x} ${y} `;
    });
    const [sx, sy] = at(0);
    const [ex, ey] = at(points.length - 1);
    return el('svg', { class: 'route', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, preserveAspectRatio: 'xMidYMid meet' },
      el('title', {}, label),
      el('path', { d: d.trim() }),
      el('circle', { class: 'start', cx: sx, cy: sy, r: 6 }),
      el('circle', { class: 'end', cx: ex, cy: ey, r: 6 }));
  }

  const workouts = {
    id: 'workouts',
    title: 'Workouts',
    types: () => ['heartRate'],
    async load({ days, state }) {
      const list = (await HK.get(HK.subjectPath('workouts'), { tz: HK.session.tz, ...span(days) })) || [];
      const selected = list.find((workout) => workout.uuid === state.selected) || null;
      let route = null;
      let rates = null;
      if (selected) {
        [route, rates] = await Promise.all([
          HK.get(HK.subjectPath(`workouts/${encodeURIComponent(selected.uuid)}/route`), { tz: HK.session.tz }).catch(() => null),
          HK.get(HK.subjectPath('samples'), { type: 'heartRate', tz: HK.session.tz, from: selected.start, to: selected.end }),
        ]);
      }
      return { list, selected, route: route || [], rates: rates || [] };
    },
    render({ list, selected, route, rates }, { days, state, reload }) {
      const card = el('section', { class: 'card', 'aria-label': 'Workouts' }, el('h3', {}, 'Workouts'));
      if (!list.length) {
        card.append(HK.empty(`No workouts ${rangeText(days)}; a longer range may show some.`));
        return card;
      }
      card.append(el('p', { class: 'sub' }, `${format.number(list.length)} ${rangeText(days)}, newest first; choose one to see its route and heart rate.`));
      const rows = [...list].reverse().map((workout) => el('tr', { 'aria-selected': String(selected && selected.uuid === workout.uuid), dataset: { uuid: workout.uuid } },
        el('th', { scope: 'row' }, el('button', {
          type: 'button', 'aria-label': `${workout.type} on ${format.dateTime(workout.start)}`,
          onclick: () => { state.selected = workout.uuid; reload(); },
        }, format.dateTime(workout.start))),
        el('td', { class: 'text' }, workout.type, workout.sameAs ? el('span', { class: 'dup', title: `Same type, times and source as ${workout.sameAs}` }, ' likely duplicate') : null),
        el('td', { dataset: { value: workout.duration } }, `${format.number(workout.duration, 0)} min`),
        el('td', { dataset: { value: workout.distance ?? '' } }, workout.distance === null ? '–' : `${format.number(workout.distance, 2)} km`),
        el('td', { dataset: { value: workout.energy ?? '' } }, workout.energy === null ? '–' : `${format.number(workout.energy, 0)} kcal`),
        el('td', { class: 'text' }, workout.source)));
      card.append(el('div', { class: 'table-wrap' }, el('table', { class: 'workouts' },
        el('caption', { class: 'skip' }, 'Workouts'),
        el('thead', {}, el('tr', {}, ['Start', 'Activity', 'Duration', 'Distance', 'Energy', 'Source'].map((name) => el('th', { scope: 'col', class: name === 'Activity' || name === 'Source' ? 'text' : null }, name)))),
        el('tbody', {}, rows))));
      if (!selected) return card;
      const detail = el('section', { class: 'card', 'aria-label': 'Workout' },
        el('h3', {}, `${selected.type}, ${format.dateTime(selected.start)}`),
        el('p', { class: 'sub' }, [
          `${format.number(selected.duration, 0)} min`,
          selected.distance === null ? null : `${format.number(selected.distance, 2)} km`,
          selected.energy === null ? null : `${format.number(selected.energy, 0)} kcal`, selected.source,
        ].filter(Boolean).join(' · ')));
      detail.append(route.length
        ? routeDrawing(route, `Route of the ${selected.type} workout: ${format.number(route.length)} points, start in green, end in blue`)
        : el('p', { class: 'empty' }, 'No route recorded with this workout.'));
      detail.append(rates.length ? HK.chart({
        name: 'workoutHeartRate', kind: 'line', beginAtZero: false, keyTitle: 'Time',
        title: 'Heart rate during the workout (bpm)',
        summary: `${rates.length} readings, highest ${format.number(Math.max(...rates.map((s) => s.value)))} bpm.`,
        labels: rates.map((sample) => format.hour(sample.start)), keys: rates.map((sample) => sample.start),
        series: [{ label: 'Heart rate', values: rates.map((sample) => sample.value), unit: 'bpm', digits: 0 }],
      }) : el('p', { class: 'empty' }, 'No heart rate during this workout.'));
      return el('div', { class: 'grid' }, card, detail);
    },
  };

  const bodyMetrics = [
    { type: 'bodyMass', title: 'Weight', unit: 'kg', digits: 1 },
    // HealthKit's percent unit holds fractions (0.22 is 22 %): shown times 100.
    { type: 'bodyFatPercentage', title: 'Body fat', unit: '%', digits: 1, scale: 100 },
  ];

  const body = {
    id: 'body',
    title: 'Body',
    types: () => ['bodyMass', 'bodyFatPercentage', 'bloodPressureSystolic', 'bloodPressureDiastolic'],
    async load({ days }) {
      const range = { tz: HK.session.tz, from: `today-${Math.max(days, 90) - 1}d`, to: 'tomorrow' };
      const [mass, fat, pressure] = await Promise.all([
        ...bodyMetrics.map((metric) => HK.get(HK.subjectPath('samples'), { type: metric.type, unit: metric.unit, ...range })),
        HK.get(HK.subjectPath('samples'), { type: 'bloodPressure', ...range }),
      ]);
      return { readings: [mass || [], fat || []], pressure: pressure || [] };
    },
    render({ readings, pressure }, { days }) {
      const grid = el('div', { class: 'grid' });
      const shownDays = Math.max(days, 90);
      bodyMetrics.forEach((metric, index) => {
        const samples = readings[index].map((sample) => ({ ...sample, value: sample.value * (metric.scale || 1) }));
        const card = el('section', { class: 'card', 'aria-label': metric.title }, el('h3', {}, metric.title));
        if (!samples.length) {
          card.append(HK.empty(`No ${metric.title.toLowerCase()} in the last ${format.number(shownDays)} days.`));
        } else {
          const latest = samples.at(-1);
          card.append(el('p', { class: 'figure' }, format.number(latest.value, metric.digits), ' ', el('small', {}, `${metric.unit}, ${format.day(latest.start)}`)));
          card.append(HK.chart({
            name: metric.type, kind: 'line', beginAtZero: false, keyTitle: 'Measured',
            title: `${metric.title} (${metric.unit}), last ${format.number(shownDays)} days`,
            summary: `${samples.length} readings; latest ${format.number(latest.value, metric.digits)} ${metric.unit}.`,
            labels: samples.map((sample) => format.day(sample.start)), keys: samples.map((sample) => sample.start),
            series: [{ label: metric.title, values: samples.map((sample) => sample.value), unit: metric.unit, digits: metric.digits }],
          }));
        }
        grid.append(card);
      });
      const card = el('section', { class: 'card', 'aria-label': 'Blood pressure' }, el('h3', {}, 'Blood pressure'));
      if (!pressure.length) {
        card.append(HK.empty(`No blood pressure in the last ${format.number(shownDays)} days.`));
      } else {
        const latest = pressure.at(-1);
        card.append(el('p', { class: 'figure' }, `${format.number(latest.bloodPressureSystolic)}/${format.number(latest.bloodPressureDiastolic)}`, ' ',
          el('small', {}, `mmHg, ${format.day(latest.start)}`)));
        card.append(HK.chart({
          name: 'bloodPressure', kind: 'line', beginAtZero: false, keyTitle: 'Measured',
          title: `Blood pressure (mmHg), last ${format.number(shownDays)} days`,
          summary: `${pressure.length} readings; latest ${latest.bloodPressureSystolic} over ${latest.bloodPressureDiastolic} mmHg.`,
          labels: pressure.map((reading) => format.day(reading.start)), keys: pressure.map((reading) => reading.start),
          series: [
            { label: 'Systolic', values: column(pressure, 'bloodPressureSystolic'), unit: 'mmHg', digits: 0 },
            { label: 'Diastolic', values: column(pressure, 'bloodPressureDiastolic'), unit: 'mmHg', digits: 0 },
          ],
        }));
      }
      grid.append(card);
      return grid;
    },
  };

  let catalog = null;
  const explore = {
    id: 'explore',
    title: 'Any type',
    types: (state) => [state.type || 'stepCount'],
    async load({ days, state }) {
      catalog = catalog || (await HK.get('types', {})) || [];
      const type = catalog.find((entry) => entry.identifier === (state.type || 'stepCount')) || catalog[0];
      const interval = state.interval || (days <= 1 ? '1h' : '1d');
      const options = type.kind === 'category' ? 'duration,by-value' : type.style === 'cumulative' ? 'sum' : 'min,avg,max';
      const buckets = await HK.get(HK.subjectPath('collection'), { type: type.identifier, interval, tz: HK.session.tz, options, ...bucketSpan(days) });
      return { type, interval, buckets: buckets || [] };
    },
    render({ type, interval, buckets }, { days, state, reload }) {
      const card = el('section', { class: 'card', 'aria-label': 'Any type' }, el('h3', {}, 'Any type from the catalog'));
      const list = el('datalist', { id: 'type-names' }, catalog.map((entry) => el('option', { value: entry.identifier })));
      const input = el('input', { list: 'type-names', value: type.identifier, spellcheck: 'false', 'aria-describedby': 'type-help' });
      const intervalPicker = el('select', {}, [['1h', 'Hour'], ['1d', 'Day'], ['1w', 'Week'], ['1mo', 'Month']]
        .map(([value, name]) => el('option', { value, selected: value === interval }, name)));
      card.append(el('form', {
        class: 'explore-form',
        onsubmit: (event) => {
          event.preventDefault();
          state.type = input.value.trim();
          state.interval = intervalPicker.value;
          reload();
        },
      }, list, el('label', {}, 'Type', input), el('label', {}, 'Bucket', intervalPicker), el('button', { type: 'submit' }, 'Show'),
      el('span', { id: 'type-help', class: 'sub' }, `${catalog.length} types; ${type.kind === 'category' ? 'category' : `${type.style}, in ${type.unit}`}`)));
      const labelOf = (bucket) => (interval === '1h' ? format.dateTime(bucket.start) : format.day(bucket.start));
      let series;
      if (type.kind === 'category') {
        series = (type.values || []).map((value) => ({ label: value.name, values: column(buckets, value.name, 3600), unit: 'h', digits: 2 }))
          .filter((entry) => present(entry.values).some((v) => v > 0));
      } else if (type.style === 'cumulative') {
        series = [{ label: 'Sum', values: column(buckets, 'sum'), unit: buckets[0] ? buckets[0].unit : type.unit, digits: 2 }];
      } else {
        const unit = buckets[0] ? buckets[0].unit : type.unit;
        series = [['Minimum', 'minimum'], ['Average', 'average'], ['Maximum', 'maximum']]
          .map(([label, key]) => ({ label, values: column(buckets, key), unit, digits: 2 }));
      }
      if (!series.length || !series.some((entry) => present(entry.values).length)) {
        card.append(HK.empty(`No ${type.identifier} ${rangeText(days)}.`));
        return card;
      }
      card.append(HK.chart({
        name: type.identifier, kind: type.style === 'cumulative' || type.kind === 'category' ? 'bar' : 'line',
        stacked: type.kind === 'category', tall: true, keyTitle: 'Bucket', beginAtZero: type.style === 'cumulative' || type.kind === 'category',
        title: `${type.identifier} per ${intervalPicker.selectedOptions[0].textContent.toLowerCase()}`,
        summary: `${buckets.length} buckets ${rangeText(days)}.`,
        labels: buckets.map(labelOf), keys: buckets.map((bucket) => bucket.start), series,
      }));
      return card;
    },
  };

  HK.views = [activity, heart, sleep, workouts, body, explore];
  HK.today = today;
})(window.HK);
