package dev.lease.samples.billing;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.samples.billing.BillingEvent.Kind;

/** Bills invoices; must never bill one twice, whichever instance runs it and however long it pauses. */
@Service
public class InvoiceBilling {

    private final Invoices invoices;
    private final Pricing pricing;
    private final ApplicationEventPublisher events;
    private final String instance;

    InvoiceBilling(Invoices invoices, Pricing pricing, ApplicationEventPublisher events,
            @Value("${billing.instance}") String instance) {
        this.invoices = invoices;
        this.pricing = pricing;
        this.events = events;
        this.instance = instance;
    }

    /**
     * Bills an invoice unless it is billed already. One instance at a time per invoice; the write carries the
     * lease's fencing token, so a holder that lost its lease while pausing cannot bill after its successor.
     *
     * @return whether this call billed the invoice
     * @throws dev.lease.LeaseLostException when the lease was lost before the method finished
     */
    @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS, waitFor = "${billing.wait-for:30s}")
    public boolean bill(long invoiceId) throws InterruptedException {
        FencingToken token = LeaseContext.token();
        publish(Kind.HOLDS, invoiceId, token.value(), "holds lease " + token.lease() + " with token " + token.value());
        Invoice invoice = invoices.find(invoiceId);
        if (invoice.isBilled()) {
            publish(Kind.SKIPPED, invoiceId, token.value(), "invoice " + invoiceId + " is billed already");
            return false;
        }
        publish(Kind.WORKS, invoiceId, token.value(), "prices invoice " + invoiceId);
        long amount = pricing.price(invoice); // slow; a lost lease interrupts the thread here
        invoices.recordBilling(invoiceId, amount, instance); // refused if a later token wrote first
        publish(Kind.ACCEPTED, invoiceId, token.value(), "billed invoice " + invoiceId + " with token " + token.value()
                + ": the table accepted it");
        return true;
    }

    /** The lease name {@link #bill} uses for an invoice, for code that takes the lease by hand. */
    public static String leaseName(long invoiceId) {
        return "invoice-" + invoiceId;
    }

    private void publish(Kind kind, long invoiceId, long token, String text) {
        events.publishEvent(new BillingEvent(instance, kind, invoiceId, token, text));
    }
}
