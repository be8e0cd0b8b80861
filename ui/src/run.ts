// A run as the page shows it: built live from the graph's custom stream, or read back from
// a thread's checkpointed state. Both give the same shape, so one view renders either.

export type Source = {
  title: string;
  source: string;
  snippet: string;
  kind: "document" | "thought";
  text?: string;
};

export type Step = {
  draft: string;
  query: string;
  sources: Source[];
  revised: string;
  status: "revised" | "unchanged" | "not_revised" | "inserted" | "dropped" | "checking";
  note: string;
};

export type Run = {
  question: string;
  model: string; // the model the run was given (its saved settings, once read back)
  drafts: string[];
  draftFrom: string;
  steps: Step[];
  answer: string;
  review: string[] | null; // the draft, while the run waits for a person's review
  error: string;
  writing: Writing; // what the model is writing now, token by token, by what it is for
  calls: number;
  tokensIn: number;
  tokensOut: number;
  seconds: number | null;
};

export type Writing = { draft: string; revision: string; answer: string };

/** Where a model call's tokens show while it writes: the node that made the call. */
export const WRITES: Record<string, keyof Writing> = {
  draft_cot: "draft",
  revise_step: "revision",
  write_answer: "answer",
  answer_once: "answer",
  direct: "answer",
};

export const EMPTY: Run = {
  question: "",
  model: "",
  drafts: [],
  draftFrom: "",
  steps: [],
  answer: "",
  review: null,
  error: "",
  writing: { draft: "", revision: "", answer: "" },
  calls: 0,
  tokensIn: 0,
  tokensOut: 0,
  seconds: null,
};

type Event = { event: string; [key: string]: unknown };

/** The run after one event of the graph's custom stream (nodes.py writes them). */
export function onEvent(run: Run, e: Event): Run {
  switch (e.event) {
    case "draft":
      return {
        ...run,
        drafts: e.drafts as string[],
        draftFrom: String(e.from ?? ""),
        review: null,
        writing: { ...run.writing, draft: "" },
      };
    case "query": {
      const steps = run.steps.slice(0, (e.step as number) - 1);
      const checking: Step = {
        draft: String(e.draft),
        query: String(e.query),
        sources: [],
        revised: "",
        status: "checking",
        note: "",
      };
      return { ...run, steps: [...steps, checking], writing: { ...run.writing, revision: "" } };
    }
    case "step": {
      const steps = run.steps.slice(0, (e.step as number) - 1);
      return { ...run, steps: [...steps, e.revision as Step], writing: { ...run.writing, revision: "" } };
    }
    default:
      return run;
  }
}

type Meta = { makes?: string; original?: string };

/** The draft as the model wrote it: plan repair keeps the steps it inserted in `drafts`
 * too (their `meta` says what each makes), and a replaced step's first text as `original`. */
function modelDraft(drafts: string[], meta: Meta[] | undefined): string[] {
  if (!meta?.length) return drafts;
  return drafts.flatMap((d, i) => (meta[i]?.makes ? [] : [meta[i]?.original || d]));
}

/** A run read back from a thread's state values. */
export function fromValues(values: Record<string, unknown> | null | undefined): Run {
  if (!values) return EMPTY;
  return {
    ...EMPTY,
    question: String(values.question ?? ""),
    model: String((values.settings as Record<string, unknown> | undefined)?.model ?? ""),
    drafts: modelDraft((values.drafts as string[]) ?? [], values.meta as Meta[] | undefined),
    draftFrom: String(values.draft_from ?? ""),
    steps: (values.steps as Step[]) ?? [],
    answer: String(values.answer ?? ""),
  };
}

/** Each step's sources as numbers into one list, deduplicated by URL (else title): as
 * parsing.number_sources numbers them for the CLI and the chat message. */
export function numberSources(steps: Step[]): { refs: number[][]; cited: Source[] } {
  const numbers = new Map<string, number>();
  const cited: Source[] = [];
  const refs: number[][] = [];
  for (const step of steps.filter((s) => s.status !== "dropped")) {
    const mine: number[] = [];
    for (const source of step.sources) {
      const key = source.source || source.title;
      if (!numbers.has(key)) {
        numbers.set(key, numbers.size + 1);
        cited.push(source);
      }
      mine.push(numbers.get(key)!);
    }
    refs.push(mine);
  }
  return { refs, cited };
}

export const STATUS: Record<Step["status"], string> = {
  revised: "revised",
  unchanged: "kept",
  not_revised: "kept, unchecked",
  inserted: "inserted",
  dropped: "dropped",
  checking: "checking…",
};
