package dev.lease.samples.reactive;

import java.time.Duration;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The HTTP side: served on Netty's event loops, which the leases never block. */
@RestController
public class InvoiceController {

    private final InvoiceBilling billing;

    public InvoiceController(InvoiceBilling billing) {
        this.billing = billing;
    }

    /** Bills the invoice; answers the fencing token it was billed with. */
    @PostMapping("/invoices/{id}/bill")
    public Mono<Long> bill(@PathVariable long id) {
        return billing.bill(id);
    }

    /** A stream of reminders, held under the invoice's lease. */
    @GetMapping(path = "/invoices/{id}/reminders", produces = MediaType.APPLICATION_NDJSON_VALUE)
    public Flux<Long> reminders(@PathVariable long id) {
        return billing.remind(id, Duration.ofMillis(50));
    }
}
