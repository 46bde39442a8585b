import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../../test/helpers/manual-clock.ts';
import { ADAPTIVE_INTERVAL_MS, ElementWatch, HIDDEN, type PageView } from './adaptive-video.ts';
import type { ElementObserverLike, IntersectionObserverEntryLike, ResizeObserverEntryLike } from './dom.ts';
import type { ResolvedBounds } from './video-bounds.ts';

/** A page whose observers and visibility the test drives. */
function fakePage(ratio = 2) {
  const resize: ((entries: readonly ResizeObserverEntryLike[]) => void)[] = [];
  const intersection: ((entries: readonly IntersectionObserverEntryLike[]) => void)[] = [];
  const observed = new Set<unknown>();
  const listeners = new Set<() => void>();
  const observer = (): ElementObserverLike => ({
    observe: (t) => observed.add(t), unobserve: (t) => observed.delete(t), disconnect: () => observed.clear(),
  });
  const document = {
    visibilityState: 'visible',
    addEventListener: (_type: 'visibilitychange', l: () => void) => listeners.add(l),
    removeEventListener: (_type: 'visibilitychange', l: () => void) => listeners.delete(l),
  };
  // constructors that return their observer, as `new` allows
  function ResizeObserver(cb: (entries: readonly ResizeObserverEntryLike[]) => void): ElementObserverLike {
    resize.push(cb);
    return observer();
  }
  function IntersectionObserver(cb: (entries: readonly IntersectionObserverEntryLike[]) => void): ElementObserverLike {
    intersection.push(cb);
    return observer();
  }
  const page: PageView = {
    ResizeObserver: ResizeObserver as unknown as PageView['ResizeObserver'],
    IntersectionObserver: IntersectionObserver as unknown as PageView['IntersectionObserver'],
    document,
    devicePixelRatio: () => ratio,
  };
  return {
    page, observed, listeners,
    size: (target: unknown, width: number, height: number) => resize.at(-1)!([{ target, contentRect: { width, height } }]),
    inView: (target: unknown, isIntersecting: boolean) => intersection.at(-1)!([{ target, isIntersecting }]),
    setHidden: (hidden: boolean) => {
      document.visibilityState = hidden ? 'hidden' : 'visible';
      for (const l of listeners) l();
    },
  };
}

const px = (w: number, h: number): ResolvedBounds => ({ maxWidth: w, maxHeight: h, maxLayer: null });

describe('ElementWatch (adaptive video)', () => {
  it('reports the largest visible element in device pixels once the observers described it, at most every 500 ms', () => {
    const f = fakePage(2);
    const clock = new ManualClock();
    const reports: ResolvedBounds[] = [];
    const watch = new ElementWatch(f.page, clock, (b) => reports.push(b));
    const a = { srcObject: null };
    watch.add(a);
    assert.deepEqual(reports, [], 'nothing before the first observations');
    f.size(a, 320, 180);
    assert.deepEqual(reports, [], 'nor before the intersection observer said');
    f.inView(a, true);
    assert.deepEqual(reports, [px(640, 360)]);
    // a resize within the interval waits for its end, and only the latest size goes out
    clock.advance(100);
    f.size(a, 400, 225.3);
    f.size(a, 480, 270.2);
    assert.equal(reports.length, 1);
    clock.advance(ADAPTIVE_INTERVAL_MS - 100);
    assert.deepEqual(reports, [px(640, 360), px(960, 541)]);
    // a second element, larger, raises the bounds; the same bounds again are not reported
    const b = { srcObject: null };
    clock.advance(ADAPTIVE_INTERVAL_MS);
    watch.add(b);
    f.size(b, 1280, 720);
    f.inView(b, true);
    assert.deepEqual(reports.at(-1), px(2560, 1440));
    clock.advance(ADAPTIVE_INTERVAL_MS);
    f.size(a, 480, 270.2);
    clock.advance(ADAPTIVE_INTERVAL_MS);
    assert.equal(reports.length, 3);
    watch.close();
    assert.equal(f.observed.size, 0);
  });

  it('asks for no video when no element is in view, has no size, or the page is hidden', () => {
    const f = fakePage(1);
    const clock = new ManualClock();
    const reports: ResolvedBounds[] = [];
    const watch = new ElementWatch(f.page, clock, (b) => reports.push(b));
    const el = { srcObject: null };
    watch.add(el);
    f.size(el, 640, 360);
    f.inView(el, false);
    assert.deepEqual(reports, [HIDDEN], 'scrolled out of view');
    clock.advance(ADAPTIVE_INTERVAL_MS);
    f.inView(el, true);
    assert.deepEqual(reports.at(-1), px(640, 360));
    clock.advance(ADAPTIVE_INTERVAL_MS);
    f.setHidden(true);
    assert.deepEqual(reports.at(-1), HIDDEN, 'page hidden');
    clock.advance(ADAPTIVE_INTERVAL_MS);
    f.setHidden(false);
    clock.advance(ADAPTIVE_INTERVAL_MS);
    f.size(el, 0, 0);
    clock.advance(ADAPTIVE_INTERVAL_MS);
    assert.deepEqual(reports, [HIDDEN, px(640, 360), HIDDEN, px(640, 360), HIDDEN]);
    watch.remove(el);
    assert.equal(f.listeners.size, 0, 'no listener left once no element is watched');
    assert.equal(clock.pending, 0);
  });

  it('without observers, an element takes any size', () => {
    const clock = new ManualClock();
    const reports: ResolvedBounds[] = [];
    const watch = new ElementWatch({ devicePixelRatio: () => 1 }, clock, (b) => reports.push(b));
    watch.add({ srcObject: null });
    assert.deepEqual(reports, [{ maxWidth: null, maxHeight: null, maxLayer: null }]);
  });
});
