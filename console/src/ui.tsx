/** Small accessible building blocks: labelled fields, the API's error in its own words, busy buttons, in-page confirmations. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export const PRODUCT = 'RTC Platform';

export function ErrorText({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error);
  return <p class="error" role="alert">{text}</p>;
}

export function Field(props: { label: string; children: ComponentChildren; hint?: string | undefined }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small>{props.hint}</small>}
    </label>
  );
}

/** Runs an action with its error shown and the form busy while it runs. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (action: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function formatTime(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}

/** The product's mark: a dot sending waves. */
export function Logo({ size = 28 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="8" fill="#4b3fd8" />
      <circle cx="12" cy="16" r="5" fill="#fff" />
      <path d="M19 10.5a8 8 0 0 1 0 11M22.5 7a13 13 0 0 1 0 18" stroke="#9ef0d6" stroke-width="2.6" fill="none" stroke-linecap="round" />
    </svg>
  );
}

/** Copies `text` and says so for two seconds. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <>
      {/* the name starts with the visible word (WCAG "label in name"); the confirmation is a status of its own */}
      <button type="button" class="secondary" aria-label={label} onClick={() => void navigator.clipboard.writeText(text).then(() => setCopied(true))}>
        Copy
      </button>
      {copied && <span role="status" class="copied">Copied</span>}
    </>
  );
}

/** A block of code with a copy button. */
export function Snippet({ code, label }: { code: string; label: string }) {
  return (
    <div class="snippet">
      <div class="snippet-bar"><span>{label}</span><CopyButton text={code} label={`Copy ${label}`} /></div>
      <pre tabIndex={0} role="region" aria-label={label}><code>{code}</code></pre>
    </div>
  );
}

/**
 * A table that keeps its words whole: when it is wider than the page it scrolls sideways in this
 * region of its own (focusable, so the keyboard scrolls it too), never the page.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>;
}

/** What a page shows while it has nothing yet, and what to do about it. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty" role="note">
      <p class="empty-title">{title}</p>
      {children}
    </div>
  );
}

/**
 * A panel that edits one item: its heading names the region, the form comes as children, and Cancel
 * closes it without saving.
 */
export function EditPanel({ title, level = 2, onCancel, children }: {
  title: string; level?: 2 | 3; onCancel: () => void; children: ComponentChildren;
}) {
  const id = useId();
  const Heading = level === 3 ? 'h3' : 'h2';
  return (
    <section class="panel" aria-labelledby={id}>
      <Heading id={id}>{title}</Heading>
      {children}
      <button type="button" class="link" onClick={onCancel}>Cancel</button>
    </section>
  );
}

export interface ConfirmRequest {
  readonly title: string;
  readonly message: ComponentChildren;
  /** The confirming button's label, e.g. "Revoke backend". */
  readonly confirm: string;
  readonly danger?: boolean;
  /** Extra named fields shown in the dialog (a ban duration, permissions): their values are passed to `onConfirm`. */
  readonly body?: ComponentChildren;
  readonly onConfirm: (fields: FormData) => Promise<void> | void;
}

/**
 * An in-page confirmation: a modal `<dialog>` with role alertdialog, its title and message as its
 * name and description, Cancel (focused first, and Escape) and a button that says what it does.
 */
export function ConfirmDialog({ request, onClose }: { request: ConfirmRequest; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const action = useAction();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog ref={ref} class="dialog" role="alertdialog" aria-modal="true" aria-labelledby={`${id}-t`} aria-describedby={`${id}-d`}
      onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <form method="dialog" onSubmit={(e) => {
        e.preventDefault();
        const fields = new FormData(e.currentTarget);
        void action.run(async () => {
          await request.onConfirm(fields);
          onClose();
        });
      }}>
        <h2 id={`${id}-t`}>{request.title}</h2>
        <div id={`${id}-d`}>{request.message}</div>
        {request.body}
        <ErrorText error={action.error} />
        <div class="dialog-actions">
          <button type="button" class="secondary" autoFocus onClick={onClose}>Cancel</button>
          <button type="submit" class={request.danger ? 'danger' : ''} disabled={action.busy}>{request.confirm}</button>
        </div>
      </form>
    </dialog>
  );
}

/** State for one confirmation at a time: `ask` opens it, `dialog` renders it. */
export function useConfirm(): { ask: (request: ConfirmRequest) => void; dialog: ComponentChildren } {
  const [request, setRequest] = useState<ConfirmRequest | undefined>(undefined);
  return {
    ask: setRequest,
    dialog: request ? <ConfirmDialog key={request.title} request={request} onClose={() => setRequest(undefined)} /> : null,
  };
}
