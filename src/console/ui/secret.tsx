// A secret shown this once (a new API key, a webhook endpoint's signing secret), with a copy button.
import { useState } from 'preact/hooks';

export function SecretShown({ title, note, secret, onDone }: { title: string; note: string; secret: string; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };
  return (
    <div class="panel secret" role="status">
      <h2>{title}</h2>
      <p>{note}</p>
      <div class="secret-row">
        <code id="secret">{secret}</code>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
