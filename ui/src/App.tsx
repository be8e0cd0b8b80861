import { Client } from "@langchain/langgraph-sdk";
import { diffWords } from "diff";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { EMPTY, STATUS, WRITES, fromValues, numberSources, onEvent, type Run, type Source, type Step } from "./run";

const GRAPH = "rat";
const KEY = "rat-api-key";
const STREAM = ["custom", "updates", "messages-tuple"] as const;

type Options = {
  models: string[];
  model: string;
  retrievers: string[];
  retriever: string;
  collection: string;
  methods: string[];
  method: string;
};

type Past = { id: string; question: string; status: string; updated: string };

function useClient(key: string): Client {
  return useMemo(() => new Client({ apiUrl: window.location.origin, apiKey: key || undefined }), [key]);
}

function refused(error: unknown): boolean {
  const status = (error as { status?: number })?.status;
  return status === 401 || status === 403 || /\b(401|403)\b/.test(String(error));
}

export function App() {
  // The tab's session only: the key is gone when the tab closes, and "Forget key" drops it.
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY) ?? "");
  const [askKey, setAskKey] = useState(false);
  const client = useClient(key);
  const [options, setOptions] = useState<Options | null>(null);
  const [settings, setSettings] = useState({ model: "", retriever: "", collection: "", method: "" });
  const [review, setReview] = useState(false);
  const [question, setQuestion] = useState("");
  const [run, setRun] = useState<Run>(EMPTY);
  const [thread, setThread] = useState("");
  const [running, setRunning] = useState(false);
  const [canResume, setCanResume] = useState(false);
  const [past, setPast] = useState<Past[]>([]);

  useEffect(() => {
    fetch("options", { headers: key ? { "x-api-key": key } : {} })
      .then((r) => {
        if (r.status === 401) throw new Error("401");
        return r.json();
      })
      .then((o: Options) => {
        setOptions(o);
        setSettings({ model: o.model, retriever: o.retriever, collection: o.collection, method: o.method });
      })
      .catch((error) => {
        setOptions(null);
        if (refused(error)) setAskKey(true);
      });
  }, [key]);

  const loadPast = useCallback(async () => {
    try {
      const threads = await client.threads.search({ limit: 30, sortBy: "updated_at", sortOrder: "desc" });
      setAskKey(false);
      setPast(
        threads.map((t) => ({
          id: t.thread_id,
          question: String(
            (t.values as Record<string, unknown> | null)?.question ?? t.metadata?.question ?? "(no question yet)",
          ),
          status: t.status,
          updated: t.updated_at,
        })),
      );
    } catch (error) {
      if (refused(error)) setAskKey(true);
    }
  }, [client]);

  useEffect(() => {
    void loadPast();
  }, [loadPast]);

  const follow = useCallback(
    async (threadId: string, payload: Record<string, unknown>, start: Run) => {
      setRunning(true);
      setCanResume(false);
      const began = performance.now();
      const calls = new Set<string>();
      let current = {
        ...start,
        model: start.model || settings.model,
        calls: 0,
        tokensIn: 0,
        tokensOut: 0,
        seconds: null as number | null,
      };
      setRun(current);
      try {
        const context = {
          model: settings.model,
          retriever: settings.retriever,
          method: settings.method,
          review_draft: review,
          ...(settings.retriever === "qdrant" && settings.collection ? { collection: settings.collection } : {}),
        };
        const stream = client.runs.stream(threadId, GRAPH, { ...payload, context, streamMode: [...STREAM] });
        for await (const chunk of stream) {
          if (chunk.event === "custom") {
            current = onEvent(current, chunk.data as { event: string });
          } else if (chunk.event === "messages") {
            const [message, meta] = chunk.data as [Record<string, any>, Record<string, any>];
            const ai = message.type === "ai" || message.type === "AIMessageChunk";
            if (ai && meta?.langgraph_node !== "reply" && message.id) {
              const fresh = !calls.has(message.id);
              calls.add(message.id);
              const usage = message.usage_metadata;
              const into = WRITES[meta?.langgraph_node];
              const text = typeof message.content === "string" ? message.content : "";
              const writing = into
                ? { ...current.writing, [into]: (fresh ? "" : current.writing[into]) + text }
                : current.writing;
              current = {
                ...current,
                writing,
                calls: calls.size,
                tokensIn: current.tokensIn + (usage?.input_tokens ?? 0),
                tokensOut: current.tokensOut + (usage?.output_tokens ?? 0),
              };
            }
          } else if (chunk.event === "error") {
            const data = chunk.data as { message?: string; error?: string };
            current = { ...current, error: data.message || data.error || "the run failed" };
          }
          setRun(current);
        }
        const state = await client.threads.getState(threadId);
        const interrupt = state.tasks.flatMap((t) => t.interrupts ?? [])[0];
        const values = fromValues(state.values as Record<string, unknown>);
        current = {
          ...values,
          model: values.model || current.model,
          error: current.error,
          calls: current.calls,
          tokensIn: current.tokensIn,
          tokensOut: current.tokensOut,
          seconds: (performance.now() - began) / 1000,
          review: interrupt ? ((interrupt.value as { drafts: string[] }).drafts ?? null) : null,
        };
        setCanResume(!interrupt && state.next.length > 0);
        setRun(current);
      } catch (error) {
        if (refused(error)) setAskKey(true);
        setRun({ ...current, error: String(error) });
      } finally {
        setRunning(false);
        void loadPast();
      }
    },
    [client, settings, review, loadPast],
  );

  const ask = async () => {
    const q = question.trim();
    if (!q || running) return;
    try {
      const created = await client.threads.create({ metadata: { question: q } });
      setThread(created.thread_id);
      await follow(created.thread_id, { input: { question: q } }, { ...EMPTY, question: q });
    } catch (error) {
      if (refused(error)) setAskKey(true);
      setRun({ ...EMPTY, question: q, error: String(error) });
    }
  };

  const open = async (id: string) => {
    const state = await client.threads.getState(id);
    const interrupt = state.tasks.flatMap((t) => t.interrupts ?? [])[0];
    setThread(id);
    setCanResume(!interrupt && state.next.length > 0);
    setRun({
      ...fromValues(state.values as Record<string, unknown>),
      review: interrupt ? ((interrupt.value as { drafts: string[] }).drafts ?? null) : null,
    });
  };

  const saveKey = (value: string) => {
    sessionStorage.setItem(KEY, value);
    setKey(value);
  };

  const forgetKey = () => {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(KEY); // where an earlier release kept it
    setKey("");
    setPast([]);
    setAskKey(true);
  };

  return (
    <div className="page">
      <aside className="past">
        <h2>Runs</h2>
        <button className="new" onClick={() => { setRun(EMPTY); setThread(""); setQuestion(""); }}>
          New question
        </button>
        <ul>
          {past.map((p) => (
            <li key={p.id}>
              <button className={p.id === thread ? "current" : ""} onClick={() => void open(p.id)} title={p.updated}>
                <span className="q">{p.question}</span>
                <span className={`state ${p.status}`}>{p.status}</span>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <main>
        <header>
          <h1>rat</h1>
          <span className="tag">retrieval augmented thoughts: a draft, checked step by step against sources</span>
        </header>
        {askKey && <KeyBox onSave={saveKey} />}
        {key && !askKey && (
          <button className="forget" onClick={forgetKey}>
            Forget key
          </button>
        )}
        <section className="ask">
          <textarea
            aria-label="Question"
            placeholder="Ask a how-to question or a task to plan"
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                void ask();
              }
            }}
          />
          <div className="settings">
            <label>
              Model
              <input list="models" value={settings.model} onChange={(e) => setSettings({ ...settings, model: e.target.value })} />
              <datalist id="models">{options?.models.map((m) => <option key={m} value={m} />)}</datalist>
            </label>
            <label>
              Source
              <select value={settings.retriever} onChange={(e) => setSettings({ ...settings, retriever: e.target.value })}>
                {options?.retrievers.map((r) => <option key={r}>{r}</option>)}
              </select>
            </label>
            {settings.retriever === "qdrant" && (
              <label>
                Collection
                <input value={settings.collection} onChange={(e) => setSettings({ ...settings, collection: e.target.value })} />
              </label>
            )}
            <label>
              Method
              <select value={settings.method} onChange={(e) => setSettings({ ...settings, method: e.target.value })}>
                {options?.methods.map((m) => <option key={m}>{m}</option>)}
              </select>
            </label>
            <label className="check">
              <input type="checkbox" checked={review} onChange={(e) => setReview(e.target.checked)} />
              Review the draft
            </label>
            <button className="go" disabled={running || !question.trim()} onClick={() => void ask()}>
              {running ? "Running…" : "Ask"}
            </button>
          </div>
        </section>
        <RunView
          run={run}
          running={running}
          canResume={canResume && !running}
          onResume={() => void follow(thread, { input: null }, run)}
          onReviewed={(drafts) => void follow(thread, { command: { resume: { drafts } } }, { ...run, review: null })}
        />
      </main>
    </div>
  );
}

function KeyBox({ onSave }: { onSave: (key: string) => void }) {
  const [value, setValue] = useState("");
  return (
    <form className="key" onSubmit={(e) => { e.preventDefault(); onSave(value.trim()); }}>
      <label>
        This server asks for an API key
        <input type="password" aria-label="API key" value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Use key</button>
    </form>
  );
}

function RunView(props: {
  run: Run;
  running: boolean;
  canResume: boolean;
  onResume: () => void;
  onReviewed: (drafts: string[]) => void;
}) {
  const { run, running } = props;
  const [open, setOpen] = useState<number | null>(null);
  const { refs, cited } = numberSources(run.steps);
  if (!run.question) return null;
  return (
    <section className="run">
      <h2 className="question">{run.question}</h2>
      {run.error && <p className="error" role="alert">{run.error}</p>}
      {run.review ? (
        <Review drafts={run.review} onDone={props.onReviewed} />
      ) : run.drafts.length > 0 ? (
        <div className="draft card">
          <h3>Draft <span className="from">{run.draftFrom}</span></h3>
          <ol>{run.drafts.map((d, i) => <li key={i}>{d}</li>)}</ol>
        </div>
      ) : (
        running && run.writing.draft && (
          <div className="draft card writing">
            <h3>Draft <span className="from">being written</span></h3>
            <p className="text">{run.writing.draft}</p>
          </div>
        )
      )}
      {run.steps.map((step, i) => (
        <StepView
          key={i}
          n={i + 1}
          step={step}
          refs={refs[i] ?? []}
          onCite={setOpen}
          writing={running && step.status === "checking" ? run.writing.revision : ""}
        />
      ))}
      {running && !run.answer && run.writing.answer && (
        <div className="answer card writing">
          <h3>Answer <span className="from">being written</span></h3>
          <p className="text">{run.writing.answer}</p>
        </div>
      )}
      {running && !run.answer && !run.writing.answer && <p className="busy">Working…</p>}
      {props.canResume && (
        <button className="resume" onClick={props.onResume}>
          Resume this run
        </button>
      )}
      {run.answer && !running && (
        <div className="answer card">
          <h3>Answer</h3>
          <p className="text">{run.answer}</p>
          <p className="checked">
            {refs.map((numbers, i) =>
              numbers.length ? (
                <span key={i}>
                  step {i + 1} {numbers.map((n) => <Cite key={n} n={n} onCite={setOpen} />)}
                </span>
              ) : null,
            )}
          </p>
          <Sources cited={cited} open={open} onToggle={setOpen} />
        </div>
      )}
      {run.seconds !== null && (
        <p className="stats">
          {run.model ? `${run.model} · ` : ""}
          {run.calls} model calls · {run.tokensIn + run.tokensOut > 0 ? `${run.tokensIn} prompt + ${run.tokensOut} completion tokens · ` : ""}
          {run.seconds.toFixed(1)} s
        </p>
      )}
    </section>
  );
}

function Cite({ n, onCite }: { n: number; onCite: (n: number) => void }) {
  return (
    <button className="cite" onClick={() => onCite(n)} title={`source ${n}`}>
      [{n}]
    </button>
  );
}

function StepView(props: { n: number; step: Step; refs: number[]; onCite: (n: number) => void; writing: string }) {
  const { n, step, refs, onCite, writing } = props;
  const changed = step.status === "revised" || step.status === "inserted";
  return (
    <div className={`step card ${step.status}`} data-step={n}>
      <h3>
        Step {n} <span className={`status ${step.status}`}>{STATUS[step.status] ?? step.status}</span>
        {refs.map((r) => <Cite key={r} n={r} onCite={onCite} />)}
      </h3>
      {step.query && <p className="query">searched: <q>{step.query}</q></p>}
      {step.status === "checking" ? (
        <>
          <p className="text">{step.draft}</p>
          {writing && <p className="text revising">revising: {writing}</p>}
        </>
      ) : changed && step.draft && step.draft !== step.revised ? (
        <p className="text diff" aria-label="revision">
          {diffWords(step.draft, step.revised).map((part, i) =>
            part.added ? <ins key={i}>{part.value}</ins> : part.removed ? <del key={i}>{part.value}</del> : <span key={i}>{part.value}</span>,
          )}
        </p>
      ) : (
        <p className="text">{step.status === "dropped" ? <del>{step.draft || step.revised}</del> : step.revised}</p>
      )}
      {step.note && <p className="note">{step.note}</p>}
      {step.sources.length > 0 && (
        <ul className="sources">
          {step.sources.map((s, i) => (
            <li key={i}>
              <details>
                <summary>{s.kind === "thought" ? "thought: " : ""}{s.title}</summary>
                <SourceLink source={s} />
                <blockquote>{s.text || s.snippet}</blockquote>
              </details>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function SourceLink({ source }: { source: Source }) {
  const web = /^https?:\/\//.test(source.source);
  return web ? (
    <a href={source.source} target="_blank" rel="noreferrer noopener">{source.source}</a>
  ) : (
    <code>{source.source}</code>
  );
}

function Sources({ cited, open, onToggle }: { cited: Source[]; open: number | null; onToggle: (n: number | null) => void }) {
  const refs = useRef<Record<number, HTMLDetailsElement | null>>({});
  useEffect(() => {
    if (open !== null) refs.current[open]?.scrollIntoView({ block: "nearest" });
  }, [open]);
  return (
    <ol className="cited">
      {cited.map((s, i) => (
        <li key={i} id={`source-${i + 1}`}>
          <details
            ref={(el) => { refs.current[i + 1] = el; }}
            open={open === i + 1}
            onToggle={(e) => { if ((e.target as HTMLDetailsElement).open) onToggle(i + 1); else if (open === i + 1) onToggle(null); }}
          >
            <summary>[{i + 1}] {s.title}</summary>
            <SourceLink source={s} />
            <blockquote>{s.text || s.snippet}</blockquote>
          </details>
        </li>
      ))}
    </ol>
  );
}

function Review({ drafts, onDone }: { drafts: string[]; onDone: (drafts: string[]) => void }) {
  const [steps, setSteps] = useState(drafts);
  useEffect(() => setSteps(drafts), [drafts]);
  return (
    <div className="review card">
      <h3>Review the draft before it is checked</h3>
      <ol>
        {steps.map((s, i) => (
          <li key={i}>
            <textarea
              aria-label={`Draft step ${i + 1}`}
              value={s}
              onChange={(e) => setSteps(steps.map((x, j) => (j === i ? e.target.value : x)))}
            />
            <button onClick={() => setSteps(steps.filter((_, j) => j !== i))} title="remove this step">
              remove
            </button>
          </li>
        ))}
      </ol>
      <button onClick={() => setSteps([...steps, ""])}>Add a step</button>
      <button className="go" onClick={() => onDone(steps.map((s) => s.trim()).filter(Boolean))}>
        Check these steps
      </button>
    </div>
  );
}
