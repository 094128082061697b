package invoice

import (
	"fmt"
	"testing"
)

// BenchmarkPDF renders invoices of 1 and 100 lines, reporting the file size.
func BenchmarkPDF(b *testing.B) { benchmarkRender(b, PDF) }

// BenchmarkPage renders hosted pages of 1 and 100 lines, reporting the page size.
func BenchmarkPage(b *testing.B) {
	benchmarkRender(b, func(v View) ([]byte, error) { return Page(v, "pdf") })
}

func benchmarkRender(b *testing.B, render func(View) ([]byte, error)) {
	for _, lines := range []int{1, 100} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			v := sampleView(lines)
			var size int
			for b.Loop() {
				out, err := render(v)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/file")
		})
	}
}
