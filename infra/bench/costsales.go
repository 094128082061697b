package main

// The cost step's sales: a 3-line sale and a 100-line one whose lines carry
// text as a shop writes it.

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"bizdata/shared/business"
)

// saleCase is one sale size of the sales routes.
type saleCase struct {
	name     string
	customer int
	code     int // the measured sale's invoice code; 9 more follow it
	lines    []map[string]any
	sub, tot string
}

func saleCases() []saleCase {
	small := saleCase{name: "3-line sale", customer: 1, code: 300000, sub: "29.00", tot: "32.00", lines: []map[string]any{
		{"item_name": "Rice 5kg", "description": "bag", "unit_price": "10.00", "quantity": "2", "tax": "2.00"},
		{"item_name": "Salt", "description": "1 kg", "unit_price": "2.50", "quantity": "2", "tax": "1.00"},
		{"item_name": "Cooking oil", "description": "1 l bottle", "unit_price": "4.00", "quantity": "1", "tax": "0"},
	}}
	big := saleCase{name: "100-line sale", customer: 2, code: 400000, sub: "2500.00", tot: "2600.00"}
	words := rand.New(rand.NewPCG(100, 1000)) // the same descriptions every run
	for i := range business.MaxSaleLines {
		big.lines = append(big.lines, map[string]any{"item_name": fmt.Sprintf("Kente %d", i+1),
			"description": descriptionText(words, 1000), "unit_price": "12.50", "quantity": "2", "tax": "1.00"})
	}
	return []saleCase{small, big}
}

func (sc saleCase) body(code string) map[string]any {
	return map[string]any{"invoice_code": code, "invoice_number": code, "customer_id": sc.customer,
		"sub_total_amount": sc.sub, "total_amount": sc.tot, "amount_paid": "0", "payment_type": "None",
		"invoice_type": "main", "due_date": "2026-12-31", "issued_by": "Bench", "items": sc.lines}
}

// descriptionText returns n characters of text as a shop writes it: sentences
// of words drawn by r from descriptionWords, with a few quantities, so that
// it compresses as such text does (repeated text would shrink far more).
func descriptionText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		words := 6 + r.IntN(10)
		for w := range words {
			word := descriptionWords[r.IntN(len(descriptionWords))]
			switch {
			case w == 0:
				word = strings.ToUpper(word[:1]) + word[1:]
			case r.IntN(12) == 0:
				word = fmt.Sprintf("%d %s", 1+r.IntN(250), descriptionUnits[r.IntN(len(descriptionUnits))])
			case w < words-1 && r.IntN(9) == 0:
				word += ","
			}
			b.WriteString(word)
			if w < words-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	text := strings.TrimRight(b.String()[:n-1], " ,.")
	return text + strings.Repeat(".", n-len(text)) // n characters, the last sentence ended
}

var descriptionUnits = []string{"kg", "g", "l", "ml", "cm", "mm", "m", "yards", "pieces", "pairs", "packs", "sheets", "rolls", "bags", "boxes", "sets"}

// descriptionWords are the words of the 100-line sale's descriptions.
var descriptionWords = strings.Fields(`
	hand woven kente strip gold green red black yellow blue white orange purple brown grey silver cream maroon navy
	cotton silk wool linen polyester rayon leather suede canvas denim velvet lace batik wax print adinkra smock fugu
	dress shirt blouse skirt trousers shorts jacket coat scarf headwrap cap hat sandals shoes slippers belt bag purse
	wallet necklace bracelet earrings ring beads bangle anklet pendant brooch tie bow tailored fitted loose long short
	sleeve sleeveless collar button zip pocket lining hem seam stitch embroidered beaded pleated gathered draped wrapped
	traditional modern classic casual formal ceremonial wedding funeral festival church office school party weekend
	holiday market durable soft smooth rough light heavy thick thin warm cool breathable washable colourfast handmade
	locally sourced imported premium standard economy deluxe large medium small extra size pattern stripe check floral
	geometric plain dyed bleached natural organic recycled bamboo cane raffia straw clay wood carved polished painted
	glazed bowl plate cup jug pot basket mat stool chair table shelf frame mirror lamp candle soap shea butter cocoa
	palm oil coconut groundnut honey pepper ginger garlic onion tomato plantain cassava yam maize rice beans millet
	sorghum flour sugar salt tea coffee milk juice water bottle sachet carton crate sack tin jar tube packet bundle
	pair set dozen piece roll sheet length width height weight colour finish quality delivery pickup order stock
	available limited edition new arrival best seller gift wrapped boxed labelled sealed fresh dried smoked roasted
	ground whole sliced chopped mixed assorted spicy sweet mild rich fragrant scented unscented gentle strong quick
	easy simple elegant bold bright vivid muted pastel deep rich matching contrasting border trim fringe tassel cord
	strap handle lid base edge corner front back side inner outer upper lower left right double single triple layer
	for with and the of in on from by to each per every our your this that customer tailor weaver artisan workshop
	Kumasi Accra Bonwire Tamale Ho Cape Coast Volta Ashanti Northern region village town city family cooperative
	guaranteed inspected tested approved certified repaired replaced returned exchanged measured cut sewn pressed
`)
