package dev.lease.samples.payments.billing;

import org.springframework.stereotype.Service;

import dev.lease.LeaseKind;
import dev.lease.Leased;

/** Bills an invoice under its lease: one instance at a time, and a stale one is refused by the payments service. */
@Service
public class InvoiceBilling {

    private final PaymentsClient payments;

    InvoiceBilling(PaymentsClient payments) {
        this.payments = payments;
    }

    @Leased(name = "invoice-#{#invoice}", kind = LeaseKind.CORRECTNESS, waitFor = "${billing.wait-for:30s}")
    public String bill(long invoice, long amount) {
        return payments.pay(invoice, amount);
    }
}
