/**
 * Adaptive video: the bounds of a received video follow the elements that show it. The largest
 * visible element, in device pixels, bounds the layer; when none is visible (scrolled away, zero
 * size, or the page hidden) the bounds ask for no video at all. Changes go out at most every
 * `intervalMs`, and only when the bounds differ from the last ones given.
 */
import { MAX_VIDEO_DIMENSION } from '@rtc/protocol';
import type { DocumentLike, ElementObserverLike, IntersectionObserverEntryLike, ResizeObserverEntryLike } from './dom.ts';
import { sameBounds, type ResolvedBounds, type Scheduler } from './video-bounds.ts';

/** What adaptive video reads of the page; each part may be missing (then it assumes visible, full size). */
export interface PageView {
  readonly ResizeObserver?: new (callback: (entries: readonly ResizeObserverEntryLike[]) => void) => ElementObserverLike;
  readonly IntersectionObserver?: new (callback: (entries: readonly IntersectionObserverEntryLike[]) => void) => ElementObserverLike;
  readonly document?: DocumentLike;
  devicePixelRatio(): number;
}

/** At most one change of a stream's adaptive bounds per this many milliseconds. */
export const ADAPTIVE_INTERVAL_MS = 500;

/** The bounds that ask for no video. */
export const HIDDEN: ResolvedBounds = Object.freeze({ maxWidth: 0, maxHeight: 0, maxLayer: null });

interface Seen {
  /** CSS pixels; undefined before the first measurement. */
  size: { readonly width: number; readonly height: number } | undefined;
  /** In the viewport; undefined before the first observation. */
  visible: boolean | undefined;
}

/** Watches the elements of one received video and reports the bounds they call for. */
export class ElementWatch {
  private readonly page: PageView;
  private readonly scheduler: Scheduler;
  private readonly report: (bounds: ResolvedBounds) => void;
  private readonly intervalMs: number;
  private readonly elements = new Map<unknown, Seen>();
  private resize: ElementObserverLike | undefined;
  private intersection: ElementObserverLike | undefined;
  private readonly onVisibility = (): void => this.changed();
  private last: ResolvedBounds | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  private timer: unknown;
  private closed = false;

  constructor(page: PageView, scheduler: Scheduler, report: (bounds: ResolvedBounds) => void, intervalMs = ADAPTIVE_INTERVAL_MS) {
    this.page = page;
    this.scheduler = scheduler;
    this.report = report;
    this.intervalMs = intervalMs;
  }

  /** How many elements are watched. */
  get size(): number {
    return this.elements.size;
  }

  add(element: unknown): void {
    if (this.closed || this.elements.has(element)) return;
    if (this.elements.size === 0) this.start();
    this.elements.set(element, { size: undefined, visible: undefined });
    this.resize?.observe(element);
    this.intersection?.observe(element);
    this.changed();
  }

  remove(element: unknown): void {
    if (!this.elements.delete(element)) return;
    this.resize?.unobserve(element);
    this.intersection?.unobserve(element);
    if (this.elements.size === 0) this.stop();
    else this.changed();
  }

  /** Stops watching every element; nothing is reported afterwards. */
  close(): void {
    this.closed = true;
    this.elements.clear();
    this.stop();
  }

  /**
   * The bounds the elements call for now; undefined until the observers described each element
   * (their first callbacks come with the next rendering). Without a ResizeObserver an element takes
   * any size; without an IntersectionObserver it counts as in view.
   */
  measure(): ResolvedBounds | undefined {
    if (this.page.document?.visibilityState === 'hidden') return HIDDEN;
    let width = 0;
    let height = 0;
    let unbounded = false;
    for (const seen of this.elements.values()) {
      if (seen.visible === undefined && this.intersection) return undefined;
      if (seen.visible === false) continue;
      if (seen.size === undefined) {
        if (this.resize) return undefined;
        unbounded = true;
        continue;
      }
      width = Math.max(width, seen.size.width);
      height = Math.max(height, seen.size.height);
    }
    if (unbounded) return { maxWidth: null, maxHeight: null, maxLayer: null };
    if (width === 0 || height === 0) return HIDDEN;
    const ratio = this.page.devicePixelRatio();
    const pixels = (css: number): number => Math.min(MAX_VIDEO_DIMENSION, Math.ceil(css * (ratio > 0 ? ratio : 1)));
    return { maxWidth: pixels(width), maxHeight: pixels(height), maxLayer: null };
  }

  private start(): void {
    const { ResizeObserver, IntersectionObserver, document } = this.page;
    if (ResizeObserver) {
      this.resize = new ResizeObserver((entries) => {
        for (const entry of entries) {
          const seen = this.elements.get(entry.target);
          if (seen) seen.size = { width: entry.contentRect.width, height: entry.contentRect.height };
        }
        this.changed();
      });
    }
    if (IntersectionObserver) {
      this.intersection = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          const seen = this.elements.get(entry.target);
          if (seen) seen.visible = entry.isIntersecting;
        }
        this.changed();
      });
    }
    document?.addEventListener('visibilitychange', this.onVisibility);
  }

  private stop(): void {
    this.resize?.disconnect();
    this.intersection?.disconnect();
    this.resize = undefined;
    this.intersection = undefined;
    this.page.document?.removeEventListener('visibilitychange', this.onVisibility);
    this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    this.last = undefined;
  }

  /** Something may have changed: report now, or at the end of the current interval. */
  private changed(): void {
    if (this.closed || this.elements.size === 0 || this.timer !== undefined) return;
    const wait = this.lastAt + this.intervalMs - this.scheduler.now();
    if (wait > 0) {
      this.timer = this.scheduler.setTimeout(() => {
        this.timer = undefined;
        this.changed();
      }, wait);
      return;
    }
    const bounds = this.measure();
    if (bounds === undefined || (this.last !== undefined && sameBounds(bounds, this.last))) return;
    this.last = bounds;
    this.lastAt = this.scheduler.now();
    this.report(bounds);
  }
}
