package builtins

import (
	"context"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mosh-dev/mosh/runtime"
)

// The building blocks of evals, importable by any script (`import { loadDataset, score } from
// "mosh:eval"`), and the two generic builtins they need: a real CSV parser and the first JSON
// value in a text.

//go:embed modules/eval.js
var evalModule string

func init() {
	runtime.RegisterModule("eval", evalModule)
	registerModuleTypes("eval", evalModuleTypes)
	Register(&Verb{
		Name: "parseCSV", Usage: "parseCSV(text)", Summary: "parse CSV text (RFC 4180: quotes, doubled quotes, embedded newlines) into an array of rows",
		Params: "text: string", Result: TSType("string[][]"),
		Detail: strings.Join([]string{
			"Each row is an array of strings; rows may differ in length. A malformed text throws with",
			"the line and column of the fault (\"parseCSV: line 3, column 7: bare \\\" in non-quoted field\").",
		}, "\n"),
		Bind: func(c *Call) (Action, error) {
			text, err := textArg(c, 0, "the CSV text")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) { return parseCSV(text) }}, nil
		},
	})
	Register(&Verb{
		Name: "firstJSON", Usage: "firstJSON(text)", Summary: "the first JSON value in a text (the whole text, or the first object or array in it), or null",
		Params: "text: string", Result: TSType("any"),
		Read: true,
		Bind: func(c *Call) (Action, error) {
			text, err := textArg(c, 0, "the text")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				v, ok := firstJSON(text)
				if !ok {
					return nil, errors.New("no JSON value")
				}
				return v, nil
			}}, nil
		},
	})
}

// evalModuleTypes declares mosh:eval's exports (modules/eval.js) for `mosh types`.
const evalModuleTypes = `/** One assertion of a case: contains, not-contains, regex, equals, json-path or command. */
export interface Assertion {
  type: "contains" | "not-contains" | "regex" | "equals" | "json-path" | "command";
  value?: any;
  path?: string;
  weight?: number;
  timeout?: number | string;
}
/** A normalised case of a dataset. */
export interface Case {
  id: string;
  prompt: string;
  expect?: string;
  rubric?: string;
  assert: Assertion[];
  /** where the case was read: "x.jsonl:3" */
  where: string;
  [key: string]: any;
}
/** One scored check: the assertion (or the case's expect) and its outcome. */
export interface CheckResult {
  type: string;
  value?: any;
  weight: number;
  pass: boolean;
  error?: string;
  got?: any;
  code?: number;
  output?: string;
}
export interface Score {
  scored: boolean;
  score: number | null;
  pass: boolean | null;
  results: CheckResult[];
  rubric: string | null;
}
export const ASSERT_TYPES: string[];
/** Read a .jsonl, .json (an array or {cases}) or .csv dataset into normalised cases; throws naming FILE:N. */
export function loadDataset(path: string): Case[];
/** moshcode's rule: a case-insensitive regex; an invalid one is a case-insensitive substring. */
export function expectMatches(expect: string, answer: string): boolean;
/** Read "a.b[0].c" (a leading "$." is allowed) from a value; undefined when absent. */
export function jsonPath(value: unknown, path: string): any;
/** Apply a case's expect and assertions to an answer. */
export function score(c: Case, answer: string, opts?: { cwd?: string }): Promise<Score>;
/** The outcomes a row can have. */
export const OUTCOMES: string[];
/** Split a shell-quoted argument string into words (quotes and backslashes as sh does); throws on an open quote. */
export function shellSplit(s: string): string[];
/** Add a git worktree of repo for one row; resolves its directory. */
export function addWorktree(repo: string, label?: string): Promise<string>;
/** Remove a worktree addWorktree made. */
export function removeWorktree(repo: string, dir: string): Promise<void>;
/** The top of the git repository holding dir. */
export function repoRoot(dir: string): Promise<string>;
/** The prompt the judge is given for a case's rubric and an answer. */
export function judgePrompt(c: Case, answer: string): string;
/** Ask the judge to score an answer against the case's rubric: {score, why}; one retry, then unscorable. */
export function judge(c: Case, answer: string, opts?: { [key: string]: any }): Promise<any>;
/** Score an answer: assertions, then the judge for a rubric; resolves {outcome, score, results, judge?}. */
export function grade(c: Case, answer: string, opts?: { [key: string]: any }): Promise<any>;
/** The values of runRow's opts.answers: any (the engine's own answer, else the screen below the prompt) or engine. */
export const ANSWER_MODES: string[];
/** The text a turn added to the screen below its typed prompt (a screen artifact without the prompt's echo); "" when none. */
export function screenAnswer(text: string, prompt: string): string;
/** A row's answer from its task's artifact: the engine's own (hook, remote), else the screen below the prompt, else none. */
export function answerOf(artifact: { text: string; source: string } | null | undefined, prompt: string): { answer: string; source: "hook" | "remote" | "screen" | "none" };
/** Run one case on a fresh member of an engine or on an existing @member; resolves the report's row. */
export function runRow(c: Case, opts?: { [key: string]: any }): Promise<any>;
/** What a row's task used, from its engine's own records (herdTaskCost); null values with the note saying why, never 0. */
export interface RowCost {
  totalTokens: number | null;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning?: number } | null;
  costUSD: number | null;
  costSource?: string;
  note?: string;
}
/** A row's cost: its task's use read by herdTaskCost under the member's engine and cwd (pass them for a member killed since). */
export function rowCost(row: any, member?: { engine?: string; cwd?: string }): Promise<RowCost>;
/** An engine's cost over its rows: tokens summed over the rows that have them, money when every such row has it, unknown: rows without. */
export function costSum(rows: any[]): { totalTokens: number | null; tokens: RowCost["tokens"]; costUSD: number | null; unknown: number; note?: string };
/** The median of a list of numbers (null for none). */
export function median(xs: number[]): number | null;
/** The report's per-engine summaries for rows at a threshold. */
export function summarize(rows: any[], engines: string[], threshold?: number): any[];
/** Escape text for XML content and attributes. */
export function xmlEscape(s: string): string;
/** The JUnit XML of an eval report. */
export function junit(report: any): string;
/** One line saying why a row ended as it did. */
export function rowMessage(r: any): string;`

func parseCSV(text string) (any, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	r.FieldsPerRecord = -1
	out := []any{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
			}
			return nil, err
		}
		row := make([]any, len(rec))
		for i, f := range rec {
			row[i] = f
		}
		out = append(out, row)
	}
}
