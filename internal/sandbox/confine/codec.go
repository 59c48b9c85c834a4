package confine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The policy and the status travel as a list of items, each "name=value"
// ended by a NUL byte; a list repeats its name, a flag is "1", a number is
// decimal. Nothing a command is given can hold a NUL (the kernel refuses
// one in a path, an argument or a variable), so no escaping is needed.
// The codec is this simple on purpose: the helper decodes it before the
// agent's other packages have initialised, without encoding/json
// (docs/design.md, "The sandbox helper is the agent's own binary").

// field binds an item's name to where its value goes; exactly one of the
// pointers is set.
type field struct {
	name string
	str  *string
	strs *[]string
	num  *int
	flag *bool
}

var errNUL = errors.New("a value holds a NUL byte")

func encode(fs []field) ([]byte, error) {
	var b strings.Builder
	item := func(name, v string) error {
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("%s: %w", name, errNUL)
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte(0)
		return nil
	}
	for _, f := range fs {
		var err error
		switch {
		case f.str != nil && *f.str != "":
			err = item(f.name, *f.str)
		case f.strs != nil:
			for _, v := range *f.strs {
				if err = item(f.name, v); err != nil {
					break
				}
			}
		case f.num != nil && *f.num != 0:
			err = item(f.name, strconv.Itoa(*f.num))
		case f.flag != nil && *f.flag:
			err = item(f.name, "1")
		}
		if err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

func decode(data []byte, fs []field) error {
	byName := make(map[string]field, len(fs))
	for _, f := range fs {
		byName[f.name] = f
	}
	seen := map[string]bool{}
	s := string(data)
	for s != "" {
		item, rest, ok := strings.Cut(s, "\x00")
		if !ok {
			return errors.New("an item without its end")
		}
		s = rest
		name, v, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("an item without a name: %.40q", item)
		}
		f, ok := byName[name]
		if !ok {
			return fmt.Errorf("an unknown item %.40q", name)
		}
		if f.strs == nil && seen[name] {
			return fmt.Errorf("%s given twice", name)
		}
		seen[name] = true
		switch {
		case f.str != nil:
			*f.str = v
		case f.strs != nil:
			*f.strs = append(*f.strs, v)
		case f.num != nil:
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %.40q is not a number", name, v)
			}
			*f.num = n
		case f.flag != nil:
			if v != "1" {
				return fmt.Errorf("%s: %.40q is not a flag", name, v)
			}
			*f.flag = true
		}
	}
	return nil
}
