package dashboard

import "net/http"

func salesPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "salesPage", "", nil)
}

func salePage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "salePage", "", nil)
}

func recordPayment(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "recordPayment", "", nil)
}

func refundSale(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "refundSale", "", nil)
}

func voidSale(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "voidSale", "", nil)
}
