package invoice

import "testing"

func TestVisualOrder(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"LatinUnchanged", "Crème brûlée (x2)", "Crème brûlée (x2)"},
		{"CyrillicUnchanged", "Иван Петров", "Иван Петров"},
		{"Hebrew", "דוד כהן", "ןהכ דוד"},
		{"HebrewWithBrackets", "דוד (כהן)", "(ןהכ) דוד"},
		{"ArabicWithLatinAndDigits", "شركة ABC 123", "ABC 123 ةكرش"},
		{"ArabicWithNumber", "فاتورة 42", "42 ةروتاف"},
		{"LatinRunKeepsItsOrder", "שלום Acme Ltd", "Acme Ltd םולש"},
		{"Empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := visualOrder(tc.in); got != tc.want {
				t.Errorf("visualOrder(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
