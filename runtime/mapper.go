package runtime

import (
	"reflect"
	"strings"
	"unicode"
)

// FieldNameMapper names Go struct fields and methods in JS: a `js:"name"` tag, else the `json`
// tag's name, else lowerCamelCase with leading initialisms lowered whole (ID→id, URL→url,
// HTTPServer→httpServer, ExitCode→exitCode). A tag of "-" hides the field.
type FieldNameMapper struct{}

// FieldName implements goja.FieldNameMapper.
func (FieldNameMapper) FieldName(_ reflect.Type, f reflect.StructField) string {
	for _, key := range []string{"js", "json"} {
		if tag, ok := f.Tag.Lookup(key); ok {
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				return ""
			}
			if name != "" {
				return name
			}
		}
	}
	return LowerCamel(f.Name)
}

// MethodName implements goja.FieldNameMapper.
func (FieldNameMapper) MethodName(_ reflect.Type, m reflect.Method) string {
	return LowerCamel(m.Name)
}

// LowerCamel lowers a Go identifier's leading capitals: the first letter, or a whole leading
// initialism except the capital that starts the next word.
func LowerCamel(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	switch {
	case n == 0:
		return s
	case n == 1 || n == len(r):
		// "Name" → "name", "ID" → "id"
	default:
		// "HTTPServer": the S starts "Server" unless what follows is not a lowercase letter.
		if unicode.IsLower(r[n]) {
			n--
		}
	}
	for i := 0; i < n; i++ {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}
