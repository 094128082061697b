package money

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	ok := map[string]string{"10": "10.00", "10.5": "10.50", "10.50": "10.50", "0": "0.00", "0.01": "0.01",
		"99999999.99": "99999999.99", "007.10": "7.10"}
	for in, want := range ok {
		a, err := ParseAmount(in)
		if err != nil || a.String() != want {
			t.Errorf("ParseAmount(%q) = %s, %v; want %s", in, a, err, want)
		}
	}
	bad := map[string]string{"": "must be a number", "-1": "negative", "1.001": "at most 2 decimal", "123456789": "at most 8 digits",
		"1e3": "plain decimal", "NaN": "plain decimal", " 1": "plain decimal", "1.": "plain decimal", ".5": "plain decimal",
		"+1": "plain decimal", "0x10": "plain decimal", "1,5": "plain decimal", "Infinity": "plain decimal"}
	for in, has := range bad {
		if _, err := ParseAmount(in); err == nil || !strings.Contains(err.Error(), has) {
			t.Errorf("ParseAmount(%q) error %v, want one with %q", in, err, has)
		}
	}
}

func TestAmountJSON(t *testing.T) {
	var v struct{ A, B Amount }
	if err := json.Unmarshal([]byte(`{"A":"10.5","B":2.25}`), &v); err != nil || v.A.String() != "10.50" || v.B.String() != "2.25" {
		t.Fatalf("%v %v", v, err)
	}
	for _, in := range []string{`{"A":true}`, `{"A":[1]}`, `{"A":1e2}`, `{"A":-0.5}`, `{"A":"1.234"}`} {
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	b, _ := json.Marshal(MustAmount("3"))
	if string(b) != `"3.00"` {
		t.Fatalf("marshal %s", b)
	}
}

func TestLineTotalRounding(t *testing.T) {
	cases := []struct{ price, qty, want string }{
		{"3.33", "1.5", "5.00"}, {"0.01", "0.5", "0.01"}, {"2.50", "2", "5.00"}, {"19.99", "3", "59.97"}, {"0.10", "0.333", "0.03"},
	}
	for _, c := range cases {
		if got := LineTotal(MustAmount(c.price), MustQuantity(c.qty)); got.String() != c.want {
			t.Errorf("%s x %s = %s, want %s", c.price, c.qty, got, c.want)
		}
	}
}

func TestQuantity(t *testing.T) {
	if q := MustQuantity("2.500"); q.String() != "2.5" {
		t.Fatal(q)
	}
	if _, err := ParseQuantity("1.0001"); err == nil {
		t.Fatal("4 decimals accepted")
	}
}

// FuzzParseAmount checks that whatever text is accepted is a valid
// decimal(10,2) whose formatted form parses back to the same value.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"10", "10.5", "0.01", "99999999.99", "1e3", "-1", "NaN", "00000000000001.10", "1.", ".1", "", "١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAmount(s)
		if err != nil {
			return
		}
		if !a.Valid() {
			t.Fatalf("%q parsed to invalid %s", s, a)
		}
		out := a.String()
		if i := strings.IndexByte(out, '.'); i < 0 || len(out)-i != 3 {
			t.Fatalf("%q formats as %q", s, out)
		}
		b, err := ParseAmount(out)
		if err != nil || b.Cmp(a) != 0 {
			t.Fatalf("%q -> %q does not round-trip: %v", s, out, err)
		}
		var j Amount
		if err := json.Unmarshal([]byte(`"`+out+`"`), &j); err != nil || j.Cmp(a) != 0 {
			t.Fatalf("JSON round trip of %q: %v", out, err)
		}
	})
}
