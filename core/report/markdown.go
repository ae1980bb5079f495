package report

import (
	"fmt"
	"math"
	"strings"

	"faithlab/core/data"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// Markdown is a run's REPORT.md: what to believe of its results, for a
// person and for a paper's supplement — each protocol setting's ranking
// with intervals, the letters of the methods it cannot tell apart and the
// chance of each ranking first; the pairs it can tell apart; whether the
// protocols agree; the report card; the diagnostics; and how the numbers
// were had. title names the run (its campaign and id); left counts the
// planned tasks missing from recs, which the report states first.
func Markdown(title string, recs []store.Record, d Diagnostics, left Left) string {
	conf := d.Confidence
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", Inline(title))
	if head, rest := left.Incomplete(len(recs)); head != "" {
		fmt.Fprintf(&b, "> **%s** %s (`faithlab-cli status` lists them).\n\n", Inline(head), Inline(rest))
	}
	writeTrust(&b, conf.Trust)
	fmt.Fprintf(&b, "Every score is the mean over the test inputs (and over the seeds, where there are several) with its %.0f %% interval, inside the score's natural range: Agresti–Coull where each input scores 0 or 1 (an accuracy), else the hull of the BCa and studentized bootstrap intervals of %d resamples (seed %d) over the inputs (with Student's t over the inputs that differ, where most tie at one value); over several seeds, Student's t on the seeds' means, so that retraining noise counts: there the seed is the unit. An interval marked \"%s\" rests on inputs too few for how skewed the score is across the run's other methods and seeds (n ≤ 25·skewness², Cochran's rule), where no interval is known to cover %.0f %%: add inputs. Two methods are told apart when the paired test of no difference — the larger p of an exact (or Monte-Carlo) sign-flip permutation test and a studentized bootstrap test, or, over several seeds, Student's t test on the seeds' mean differences — rejects at %.0f %%, Holm-corrected over the protocol's pairs; a p drawn by Monte Carlo is shown with its standard error, drawn afresh once a pilot has settled its side of every level Holm compares it with. Methods sharing a letter cannot be told apart. P(first) is the share of resamples in which a method ranks first. Each statement holds, does not hold, is inconclusive (within the noise: it says the smallest difference this run finds %.0f %% of the time and about how many inputs, or seeds, would decide it) or is not evaluated.\n\n",
		100*conf.Level, conf.Resamples, conf.Seed, FewInputs, 100*conf.Level, 100*Alpha, 100*power)
	few := 0
	for _, r := range conf.Rankings {
		if r.Seeds >= 2 && r.Seeds < 5 {
			few = r.Seeds
		}
	}
	if few > 0 {
		fmt.Fprintf(&b, "With %d seeds, Student's t over the seeds has %s: its intervals are wide and its tests find only large differences (at 3 seeds, 30 %% of the differences the inputs pooled would find 80 %% of the time; package stats), the price of counting retraining noise that %d seeds measure poorly. Add seeds to narrow them.\n\n", few, Count(few-1, "degree")+" of freedom", few)
	}
	if len(conf.Missing) > 0 {
		var names []string
		for _, m := range conf.Missing {
			names = append(names, Inline(m.Protocol+" on "+m.Dataset))
		}
		fmt.Fprintf(&b, "> **No intervals for %s**: these results keep no per-input values (a run from before Faithlab kept them). Run the campaign again, in a new folder, to have them.\n\n", strings.Join(names, ", "))
	}
	if len(conf.Card) > 0 {
		b.WriteString("## Report card\n\n")
		b.WriteString("| protocol | dataset | verdict |\n|---|---|---|\n")
		for _, row := range conf.Card {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cellText(row.Protocol), cellText(row.Dataset), cellText(row.Verdict))
		}
		b.WriteString("\n")
		for _, row := range conf.Card {
			fmt.Fprintf(&b, "### %s on %s\n\n", Inline(row.Protocol), Inline(row.Dataset))
			b.WriteString("| check | value | finding |\n|---|---|---|\n")
			for _, f := range row.Findings() {
				mark := ""
				if f.F.Flag {
					mark = " ⚠"
				}
				fmt.Fprintf(&b, "| %s%s | %s | %s |\n", cellText(f.Name), mark, findingValue(f.Name, f.F.Value), cellText(f.F.Words))
			}
			b.WriteString("\n")
		}
	}
	for _, r := range conf.Rankings {
		fmt.Fprintf(&b, "## %s on %s: %s (%s)\n\n", Inline(r.Protocol), Inline(r.Dataset), Inline(r.Metric), betterWord(r.Better))
		fmt.Fprintf(&b, "%s × %s. ", Count(r.Units, "input"), Count(r.Seeds, "seed"))
		if v := r.Verdict(); v != "" {
			fmt.Fprintf(&b, "%s.\n\n", capital(Inline(v)))
		} else {
			b.WriteString("\n\n")
		}
		b.WriteString("| method | score [95 % interval] | group | P(first) | mean rank |\n|---|---|---|---|---|\n")
		for _, m := range r.Methods {
			weak := ""
			if m.Weak {
				weak = " !"
			}
			fmt.Fprintf(&b, "| %s%s | %s%s | %s | %s | %s |\n", cellText(m.Method), weak, cellOf(m), fewWords(m.CI), cellText(m.Letters), Fixed2(m.PFirst), Fixed2(m.MeanRank))
		}
		b.WriteString("\n")
		if len(r.Pairs) > 0 {
			b.WriteString("| A − B | difference [95 % interval] | p (paired) | p (Holm) | p (Wilcoxon) | told apart |\n|---|---|---|---|---|---|\n")
			for _, p := range r.Pairs {
				apart := cellText(p.Words)
				if p.Outcome == Holds {
					apart = "**" + apart + "**"
				}
				fmt.Fprintf(&b, "| %s − %s | %s | %s | %s | %s | %s |\n", cellText(p.A), cellText(p.B), diffText(p.Diff),
					strings.TrimPrefix(pairP(p), "= "), strings.TrimPrefix(pValue(p.PHolm), "= "), strings.TrimPrefix(pValue(p.PWilcoxon), "= "), apart)
			}
			b.WriteString("\n")
		}
	}
	if len(conf.Agreement)+len(conf.Contradictions) > 0 {
		b.WriteString("## Do the protocols agree?\n\n")
		for _, c := range conf.Contradictions {
			fmt.Fprintf(&b, "**They contradict each other on %s**: %s.\n\n", Inline(c.Dataset), Inline(c.Words))
		}
		for _, a := range conf.Agreement {
			fmt.Fprintf(&b, "Do the protocols agree on %s? %s.\n\n", Inline(a.Dataset), capital(Inline(a.Says())))
			if len(a.Protocols) == 0 {
				continue
			}
			fmt.Fprintf(&b, "Kendall's τ between the rankings:\n\n| | %s |\n|---|%s\n", strings.Join(cellTexts(a.Protocols), " | "), strings.Repeat("---|", len(a.Protocols)))
			for i, p := range a.Protocols {
				var cells []string
				for _, v := range a.Tau[i] {
					cells = append(cells, tauCell(v))
				}
				fmt.Fprintf(&b, "| %s | %s |\n", cellText(p), strings.Join(cells, " | "))
			}
			b.WriteString("\n")
		}
	}
	if lines := d.Summary(); len(lines) > 0 {
		b.WriteString("## Diagnostics\n\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", Inline(l))
		}
		b.WriteString("\n")
	}
	if s := Summary(recs, d); s != "" {
		b.WriteString("## Headline scores\n\n```\n" + CodeText(s) + "```\n")
	}
	return b.String()
}

// writeTrust is REPORT.md's first section: each dataset's answer to
// "which method should I trust on this model?" (trust.go).
func writeTrust(b *strings.Builder, answers []Answer) {
	if len(answers) == 0 {
		return
	}
	b.WriteString("## Which method to trust\n\n")
	for _, a := range answers {
		if len(answers) > 1 {
			fmt.Fprintf(b, "### On %s\n\n", Inline(a.Dataset))
		}
		fmt.Fprintf(b, "**%s.**\n\n", Inline(a.Headline))
		if len(a.Methods) > 0 {
			fmt.Fprintf(b, "Combined ranking over the admitted protocols: each method's rank on each input under each, averaged (1 is best), with its 95 %% interval from resampling the %s%s.\n\n", Count(a.Units, "input"), pickWord(a.Seeds > 1, fmt.Sprintf(" and %d seeds", a.Seeds), ""))
			b.WriteString("| method | mean rank [95 % interval] | P(first) | beats Random |\n|---|---|---|---|\n")
			for _, m := range a.Methods {
				beats := "—"
				if !m.Control {
					beats = string(m.BeatsRandom) + ": " + m.Words
				}
				fmt.Fprintf(b, "| %s | %s [%s, %s] | %s | %s |\n", cellText(m.Method), Fixed2(m.MeanRank.Estimate), Fixed2(m.MeanRank.Lo), Fixed2(m.MeanRank.Hi), Fixed2(m.PFirst), cellText(beats))
			}
			b.WriteString("\n")
		}
		if len(a.Pairs) > 0 {
			b.WriteString("| pair | across the admitted protocols |\n|---|---|\n")
			for _, p := range a.Pairs {
				v := p.Verdict
				if v == PairContradiction {
					v = "**contradiction**"
				}
				fmt.Fprintf(b, "| %s, %s | %s: %s |\n", cellText(p.A), cellText(p.B), v, cellText(p.Words))
			}
			b.WriteString("\n")
		}
		if d := a.Divergence; d != nil {
			fmt.Fprintf(b, "Where they diverge most: %s.", Inline(d.Words))
			if d.Shown >= 0 {
				b.WriteString(" The figure `which_method_evidence` (`faithlab-cli export --figures`, and Results' figures) shows that input as each protocol perturbed it for each method, with the class the model predicts for each image.")
			}
			b.WriteString("\n\n")
		}
		if a.CheckLine != "" {
			fmt.Fprintf(b, "%s.\n\n", Inline(a.CheckLine))
		}
		b.WriteString("| protocol | admission | decided by | why |\n|---|---|---|---|\n")
		for _, ad := range a.Admissions {
			by := "—"
			if ad.Check != "" && ad.Admit == SetAside {
				by = fmt.Sprintf("%s %s (%s)", ad.Check, findingValue(ad.Check, ad.Value), ad.Threshold)
			} else if ad.Admit == Admitted && ad.Threshold != "" {
				by = ad.Threshold
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cellText(ad.Protocol), ad.Admit, cellText(by), cellText(ad.Words))
		}
		b.WriteString("\n")
	}
}

// Left counts the planned tasks a report's results lack.
type Left struct{ Failed, NotRun int }

// Incomplete words, for a run of done tasks missing l's, that its report
// is incomplete: "Incomplete: 4 of 6 tasks are missing" and what follows
// ("(0 failed, 4 not run). The rankings rest on …"); "" when none are.
func (l Left) Incomplete(done int) (head, rest string) {
	n := l.Failed + l.NotRun
	if n == 0 {
		return "", ""
	}
	return fmt.Sprintf("Incomplete: %d of %s are missing", n, Count(done+n, "task")),
		fmt.Sprintf("(%d failed, %d not run). The rankings rest on the %d done and may change when the rest run", l.Failed, l.NotRun, done)
}

// diffText is a pair's difference with its interval, "0.012 [-0.003,
// 0.027]", or "no input differs" where none does (an interval of [0, 0]
// would claim the methods are the same beyond these inputs).
func diffText(d stats.Interval) string {
	if d.Method == stats.MethodNoneDiffer {
		return NoneDiffer
	}
	return fmt.Sprintf("%s [%s, %s]%s", number(d.Estimate), number(d.Lo), number(d.Hi), fewWords(d))
}

// pairP writes a pair's p with how it was had: pWords's, or "= 0.12 (t
// over 3 seeds)" where Student's t over the seeds gave it.
func pairP(p Pair) string {
	if p.PTest == stats.TestSeeds && !math.IsNaN(p.P) {
		return pValue(p.P) + " (t over " + Count(p.Diff.Groups, "seed") + ")"
	}
	return pWords(p.P, p.PExact, p.PError)
}

// capital is s with its first letter a capital.
func capital(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// fewWords is what a flagged interval says beside it: " (few inputs:
// interval may be too narrow)"; "" for one not flagged.
func fewWords(iv stats.Interval) string {
	if !iv.Few || math.IsNaN(iv.Lo) {
		return ""
	}
	return " (" + FewInputs + ")"
}

// cellText is text from a file or a record made inert in a table cell
// (Inline: a cell's "|" is escaped too).
func cellText(s string) string { return Inline(s) }

func cellTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = cellText(s)
	}
	return out
}

// Inline makes text that may come from a file — a spec's name, a method's
// label, a dataset's path, a class's name, a record's fields, and the
// sentences that quote them — inert where it lands in Markdown, and so in
// REPORT.md and in the workbench's views of it: kept on its line (control
// and format characters become spaces), and never markup that escapes its
// place — no HTML tag ("<" becomes "&lt;"), no link or image ("](" and
// "![" are escaped), no address a viewer links or fetches ("://" and
// "www." are escaped), no code span, table cell's end or emphasis
// ("`", "|", "*", "~" and "\\" are escaped). A person reads the same words.
func Inline(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case data.Unprintable(r):
			b.WriteByte(' ')
		case r == '<':
			b.WriteString("&lt;")
		case strings.ContainsRune("\\`|*~", r),
			r == '(' && i > 0 && s[i-1] == ']',
			r == '[' && i > 0 && s[i-1] == '!',
			r == '/' && strings.HasPrefix(s[i:], "//") && i > 0 && s[i-1] == ':',
			r == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CodeText makes text inert inside a fenced code block: its lines kept,
// control and format characters other than the newline made spaces, and
// no backtick, so that no line closes the fence.
func CodeText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '`':
			return '\''
		case data.Unprintable(r):
			return ' '
		}
		return r
	}, s)
}

func tauCell(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%+.2f", v)
}

// findingValue writes a card's figure as its check reads it.
func findingValue(check string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "∞"
	case check == "Random control":
		return fmt.Sprintf("%.0f beat it", v) // methods told apart above the control
	case check == "Separation":
		return fmt.Sprintf("%.0f %% of pairs", 100*v) // told apart
	case check == "Mask shape":
		return fmt.Sprintf("R² %.2f", v)
	case check == "Post-processing":
		return fmt.Sprintf("%.0f %%", 100*v)
	case check == "Ground truth":
		return fmt.Sprintf("r %+.2f", v)
	case check == "Other protocols":
		return Count(int(v), "pair") + " flipped"
	case check == "Methods ranked":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Fixed2 writes v with two decimals, "—" where it is undefined (a method
// that is not ranked).
func Fixed2(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return Decimals(v, 2)
}
