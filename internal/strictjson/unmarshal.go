package strictjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// FieldError reports a value that does not fit the target type, with the
// JSONPath and position of the offending value.
type FieldError struct {
	Path Path
	Line int
	Col  int
	Msg  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s: %s", e.Line, e.Col, e.Path, e.Msg)
}

// Unmarshal decodes one strict JSON document into v, a non-nil pointer.
// Beyond Parse's rules, object keys must name struct fields with exactly
// the case of their json tag (encoding/json would match case-insensitively,
// which lets "Aud" shadow "aud"), unknown keys are refused, and each value
// must have the kind of its field. Fields whose types implement
// json.Unmarshaler, json.RawMessage and interface fields are checked only
// by Parse's rules.
func Unmarshal(data []byte, v any, opts Options) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Unmarshal needs a non-nil pointer, got %T", v)
	}
	tree, err := Parse(data, opts)
	if err != nil {
		return err
	}
	if err := Check(tree, rv.Type().Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		// Check accepts only what encoding/json decodes; reaching here is a bug
		// in Check, reported without guessing a position.
		return fmt.Errorf("decoding: %w", err)
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
)

// Check verifies that tree fits type t under the rules of Unmarshal.
func Check(tree *Value, t reflect.Type) error {
	return check(tree, t, Root)
}

func fieldErr(v *Value, path Path, format string, args ...any) error {
	return &FieldError{Path: path, Line: v.Line, Col: v.Col, Msg: fmt.Sprintf(format, args...)}
}

func check(v *Value, t reflect.Type, path Path) error {
	if t == rawMessageType || t == numberType && v.Kind == Number {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		if v.Kind == Null {
			return nil
		}
		return check(v, t.Elem(), path)
	}
	if v.Kind == Null {
		// encoding/json leaves the target unchanged for null; accept it for
		// maps, slices and interfaces, where "absent" is a meaningful value,
		// and refuse it elsewhere so that `"timeout": null` is reported.
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Interface:
			return nil
		}
		return fieldErr(v, path, "expected %s, found null", describe(t))
	}
	if (reflect.PointerTo(t).Implements(textUnmarshalerType)) && v.Kind == String {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Bool:
		if v.Kind != Bool {
			return fieldErr(v, path, "expected a boolean, found %s", v.Kind)
		}
	case reflect.String:
		if v.Kind != String {
			return fieldErr(v, path, "expected a string, found %s", v.Kind)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Kind != Number {
			return fieldErr(v, path, "expected an integer, found %s", v.Kind)
		}
		n, err := strconv.ParseInt(v.Str, 10, t.Bits())
		if err != nil {
			return fieldErr(v, path, "expected an integer within range, found %s", v.Str)
		}
		_ = n
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Kind != Number {
			return fieldErr(v, path, "expected a non-negative integer, found %s", v.Kind)
		}
		if _, err := strconv.ParseUint(v.Str, 10, t.Bits()); err != nil {
			return fieldErr(v, path, "expected a non-negative integer within range, found %s", v.Str)
		}
	case reflect.Float32, reflect.Float64:
		if v.Kind != Number {
			return fieldErr(v, path, "expected a number, found %s", v.Kind)
		}
		f, err := strconv.ParseFloat(v.Str, t.Bits())
		if err != nil || math.IsInf(f, 0) {
			return fieldErr(v, path, "number out of range: %s", v.Str)
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			if v.Kind != String {
				return fieldErr(v, path, "expected a base64 string, found %s", v.Kind)
			}
			return nil
		}
		if v.Kind != Array {
			return fieldErr(v, path, "expected an array, found %s", v.Kind)
		}
		if t.Kind() == reflect.Array && len(v.Items) > t.Len() {
			return fieldErr(v, path, "expected at most %d items, found %d", t.Len(), len(v.Items))
		}
		for i, it := range v.Items {
			if err := check(it, t.Elem(), path.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Kind != Object {
			return fieldErr(v, path, "expected an object, found %s", v.Kind)
		}
		if k := t.Key().Kind(); k != reflect.String {
			return fieldErr(v, path, "unsupported map key type %s", t.Key())
		}
		for _, m := range v.Members {
			if err := check(m.Value, t.Elem(), path.Key(m.Key)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if v.Kind != Object {
			return fieldErr(v, path, "expected an object, found %s", v.Kind)
		}
		fields := structFields(t)
		for _, m := range v.Members {
			f, ok := fields[m.Key]
			if !ok {
				return &FieldError{Path: path.Key(m.Key), Line: m.Line, Col: m.Col, Msg: "unknown field"}
			}
			if err := check(m.Value, f, path.Key(m.Key)); err != nil {
				return err
			}
		}
	default:
		return fieldErr(v, path, "unsupported field type %s", t)
	}
	return nil
}

func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a number"
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// structFields maps each JSON key of a struct (exact case) to its field
// type, following encoding/json's naming: the tag name, else the Go name;
// "-" omits; untagged embedded structs are flattened.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := make(map[string]reflect.Type)
	addFields(t, m, 0)
	fieldCache.Store(t, m)
	return m
}

func addFields(t reflect.Type, m map[string]reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(ft, m, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := m[name]; !dup {
			m[name] = f.Type
		}
	}
}
