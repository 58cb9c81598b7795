package dev.lease.samples.payments.service;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.fence.http.FencedRequest;

/**
 * Pays an invoice. {@code @FencedRequest} advances the fence of {@code payment-<invoice>} with the caller's token,
 * in this method's transaction, before the body runs: a caller whose lease was taken over since gets 409 and pays
 * nothing; a call without the header gets 428. Only tokens of the invoice's own lease are taken.
 */
@RestController
class PaymentController {

    private final JdbcTemplate jdbc;

    PaymentController(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @PostMapping("/invoices/{invoice}/payment")
    @Transactional
    @FencedRequest(resource = "payment-#{#invoice}", lease = "invoice-#{#invoice}")
    public String pay(@PathVariable long invoice, @RequestParam long amount, @RequestParam String by) {
        jdbc.update("INSERT INTO payment (invoice, amount, paid_for) VALUES (?, ?, ?)", invoice, amount, by);
        return "paid invoice " + invoice + " for " + by;
    }
}
