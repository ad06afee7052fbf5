package builtins

import (
	"context"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/mattn/go-runewidth"
)

func init() {
	Register(&Verb{
		Name: "table", Usage: "table(rows, {columns})", Summary: "print rows as a table",
		Params: "rows: Record<string, unknown>[], opts?: { columns?: string[] }", Result: TSType("void"),
		Detail: "rows is an array of objects (or of arrays). columns picks and orders the keys; by default\n" +
			"every key in order of first appearance. On a terminal: an UPPERCASE header and aligned\n" +
			"columns. Off one (a pipe, a file, CI): no header, tab-separated, one row per line.",
		Bind: bindTable,
	})
}

func bindTable(c *Call) (Action, error) {
	if !c.Given(0) || !isArray(c.Arg(0)) {
		return Action{}, c.Misuse("rows must be an array of objects, not %s", typeName(c.Arg(0)))
	}
	opts, err := c.Options(1, "the options")
	if err != nil {
		return Action{}, err
	}
	if err := c.Known(opts, "columns"); err != nil {
		return Action{}, err
	}
	var columns []string
	if opts != nil {
		if v := opts.Get("columns"); v != nil && !goja.IsUndefined(v) {
			if !isArray(v) || c.VM().ExportTo(v, &columns) != nil {
				return Action{}, c.Misuse("columns must be an array of key names")
			}
		}
	}
	vm := c.VM()
	rowsObj := c.Arg(0).(*goja.Object)
	n := int(rowsObj.Get("length").ToInteger())
	rows := make([]*goja.Object, 0, n)
	byIndex := false
	for i := 0; i < n; i++ {
		o, ok := rowsObj.Get(fmt.Sprint(i)).(*goja.Object)
		if !ok {
			return Action{}, c.Misuse("row %d is %s; every row must be an object or an array", i, typeName(rowsObj.Get(fmt.Sprint(i))))
		}
		if o.ClassName() == "Array" {
			byIndex = true
		}
		rows = append(rows, o)
	}
	header := columns
	if columns == nil && !byIndex {
		seen := map[string]bool{}
		for _, r := range rows {
			for _, k := range r.Keys() {
				if !seen[k] {
					seen[k] = true
					columns = append(columns, k)
				}
			}
		}
		header = columns
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		if byIndex && r.ClassName() == "Array" {
			m := int(r.Get("length").ToInteger())
			for j := 0; j < m; j++ {
				cells[i] = append(cells[i], cellText(vm, r.Get(fmt.Sprint(j))))
			}
			continue
		}
		for _, k := range columns {
			cells[i] = append(cells[i], cellText(vm, r.Get(k)))
		}
	}
	tty := c.in.cfg.StdoutTTY
	return Action{Do: func(context.Context) (any, error) {
		_, err := fmt.Fprint(c.in.cfg.Stdout, renderTable(header, cells, tty))
		return goja.Undefined(), err
	}}, nil
}

// cellText shows a value in one cell: strings raw, null/undefined empty, objects as JSON, and
// never a tab or newline (they would break the row).
func cellText(vm *goja.Runtime, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	s := display(vm, v)
	return strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// renderTable lays out cells: padded with an UPPERCASE header for a terminal, TSV otherwise.
func renderTable(header []string, cells [][]string, tty bool) string {
	var b strings.Builder
	if !tty {
		for _, row := range cells {
			b.WriteString(strings.Join(row, "\t"))
			b.WriteByte('\n')
		}
		return b.String()
	}
	cols := len(header)
	for _, row := range cells {
		cols = max(cols, len(row))
	}
	width := make([]int, cols)
	upper := make([]string, len(header))
	for i, h := range header {
		upper[i] = strings.ToUpper(h)
		width[i] = runewidth.StringWidth(upper[i])
	}
	for _, row := range cells {
		for i, s := range row {
			width[i] = max(width[i], runewidth.StringWidth(s))
		}
	}
	line := func(row []string) {
		for i, s := range row {
			if i == len(row)-1 {
				b.WriteString(s)
				break
			}
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", width[i]-runewidth.StringWidth(s)+2))
		}
		b.WriteByte('\n')
	}
	if len(header) > 0 {
		line(upper)
	}
	for _, row := range cells {
		line(row)
	}
	return b.String()
}
