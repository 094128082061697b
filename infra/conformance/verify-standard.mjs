// Verifies one delivery with the Standard Webhooks reference library, as a
// merchant's receiver would: argv[2] is the secret (argv[3] "raw" for a secret
// that is not whsec_<base64>), stdin a JSON object
// {"headers": {...}, "body": "<raw body>"}. Prints the verified payload's
// transaction_id (an event's id, for an endpoint's delivery), or exits 1
// with the library's error.
import { Webhook } from "standardwebhooks";

let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const { headers, body } = JSON.parse(input);
  try {
    const options = process.argv[3] === "raw" ? { format: "raw" } : undefined;
    const payload = new Webhook(process.argv[2], options).verify(body, headers);
    console.log(payload.transaction_id ?? payload.id);
  } catch (e) {
    console.error(String(e && e.message ? e.message : e));
    process.exit(1);
  }
});
