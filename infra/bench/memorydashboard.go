package main

// The memory step's plans of the dashboard's four functions.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/dashboard"
)

// dashboardPlan is the plan of one of the dashboard's functions, over the
// shop's owner: the assets; the sign-in page, then sign-ins (an argon2id
// hash each); the pages of a session (overview, lists, the 100-line sale);
// forms that add a customer. A 2 MiB form is refused before it is read.
func (b *bench) dashboardPlan(name string, s *memShop, deadline time.Duration) (fnPlan, bool, error) {
	page := func(path string, cookies func() []string) gatewayRequest {
		return gatewayRequest{method: "GET", path: path, cookies: cookies, want: 200}
	}
	form := func(path string, values url.Values, cookies func() []string, want int) gatewayRequest {
		return gatewayRequest{method: "POST", path: path, body: values.Encode(), form: true, cookies: cookies, want: want}
	}
	huge := func(r gatewayRequest, want int) gatewayRequest {
		r.body, r.want = "name="+strings.Repeat("x", 2<<20), want
		return r
	}
	switch name {
	case dashboard.FunctionAssets:
		files := []string{"app.css", "logo.svg"}
		var ordinary []gatewayRequest
		for i := range 4 {
			ordinary = append(ordinary, page("/dashboard/assets/"+files[i%2], nil))
		}
		return b.gatewayPlan(name, deadline, page("/dashboard/assets/app.css", nil), ordinary, huge(page("/dashboard/assets/app.css", nil), 200)), true, nil
	case dashboard.FunctionAuth:
		token, _ := business.NewToken()
		cookies := func() []string { return []string{"__Host-form=" + token} }
		signIn := form("/dashboard/sign-in", url.Values{"csrf": {token}, "email": {s.email}, "password": {s.password}, "next": {"/dashboard"}}, cookies, http.StatusSeeOther)
		var ordinary []gatewayRequest
		for range 4 {
			ordinary = append(ordinary, signIn)
		}
		return b.gatewayPlan(name, deadline, page("/dashboard/sign-in", cookies), ordinary, huge(signIn, http.StatusBadRequest)), true, nil
	}
	session, _, err := b.store.CreateSession(b.ctx, s.email)
	if err != nil {
		return fnPlan{}, true, err
	}
	cookies := func() []string { return []string{"__Host-session=" + session} }
	switch name {
	case dashboard.FunctionPages:
		var ordinary []gatewayRequest
		for _, path := range []string{"/dashboard/sales", "/dashboard/customers", "/dashboard/developers", "/dashboard"} {
			ordinary = append(ordinary, page(path, cookies))
		}
		return b.gatewayPlan(name, deadline, page("/dashboard", cookies), ordinary, page("/dashboard/sales/"+s.bigSale, cookies), huge(page("/dashboard", cookies), 200)), true, nil
	case dashboard.FunctionActions:
		add := func(i int) gatewayRequest {
			return form("/dashboard/customers", url.Values{"csrf": {business.CSRFToken(session)}, "name": {fmt.Sprintf("Dashboard customer %d", i)}}, cookies, http.StatusSeeOther)
		}
		var ordinary []gatewayRequest
		for i := range 4 {
			ordinary = append(ordinary, add(i+1))
		}
		return b.gatewayPlan(name, deadline, add(0), ordinary, huge(add(5), http.StatusBadRequest)), true, nil
	}
	return fnPlan{}, false, nil
}
