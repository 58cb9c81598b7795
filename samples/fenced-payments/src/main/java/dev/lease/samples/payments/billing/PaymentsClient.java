package dev.lease.samples.payments.billing;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/**
 * Calls the payments service through a {@code RestClient} built from Boot's builder: inside a leased section the
 * lease starter adds the {@code Fencing-Token} header, and a 409 stale-token answer comes back as
 * {@code StaleTokenException}. Nothing here mentions tokens.
 */
@Component
public class PaymentsClient {

    private final RestClient payments;
    private final String instance;

    PaymentsClient(RestClient.Builder builder, @Value("${billing.payments-url}") String paymentsUrl,
            @Value("${billing.instance}") String instance) {
        this.payments = builder.baseUrl(paymentsUrl).build();
        this.instance = instance;
    }

    public String pay(long invoice, long amount) {
        return payments.post().uri("/invoices/{invoice}/payment?amount={amount}&by={by}", invoice, amount, instance)
                .retrieve().body(String.class);
    }
}
