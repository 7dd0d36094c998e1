package cache

import (
	"errors"
	"strings"
	"testing"
)

func TestCompareResourceVersion(t *testing.T) {
	cases := []struct {
		name    string
		a, b    string
		want    int
		wantErr string // the offending version, quoted; "" for no error
	}{
		{name: "equal", a: "42", b: "42", want: 0},
		{name: "older", a: "9", b: "10", want: -1},
		{name: "newer by length", a: "100", b: "99", want: 1},
		{name: "newer same length", a: "1235", b: "1234", want: 1},
		{name: "beyond uint64", a: "123456789012345678901234567890", b: "99999999999999999999", want: 1},
		{name: "empty", a: "", b: "1", wantErr: `""`},
		{name: "zero", a: "1", b: "0", wantErr: `"0"`},
		{name: "leading zero", a: "012", b: "12", wantErr: `"012"`},
		{name: "not decimal", a: "5", b: "abc", wantErr: `"abc"`},
		{name: "negative", a: "-1", b: "5", wantErr: `"-1"`},
		{name: "opaque", a: "MTIz", b: "MTIz", wantErr: `"MTIz"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompareResourceVersion(tc.a, tc.b)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrResourceVersionNotComparable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CompareResourceVersion(%q, %q) error = %v, want ErrResourceVersionNotComparable naming %s", tc.a, tc.b, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("CompareResourceVersion(%q, %q) = %d, %v, want %d", tc.a, tc.b, got, err, tc.want)
			}
			if back, _ := CompareResourceVersion(tc.b, tc.a); back != -tc.want {
				t.Fatalf("CompareResourceVersion(%q, %q) = %d, want %d", tc.b, tc.a, back, -tc.want)
			}
		})
	}
}
