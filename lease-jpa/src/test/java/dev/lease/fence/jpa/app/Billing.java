package dev.lease.fence.jpa.app;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.LeaseKind;
import dev.lease.Leased;

/** Leased methods as applications write them: the transaction on the leased method, or on a bean it calls. */
@Service
public class Billing {

    private final Invoices invoices;
    private final InvoiceStates states;

    public Billing(Invoices invoices, InvoiceStates states) {
        this.invoices = invoices;
        this.states = states;
    }

    /** Dirty checking inside {@code @Transactional} on the leased method itself. */
    @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
    @Transactional
    public void bill(long id) {
        invoices.findById(id).orElseThrow().setState("BILLED");
    }

    /** The leased method calls a {@code @Transactional} bean, which commits inside the section. */
    @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
    public void cancel(long id) {
        states.set(id, "CANCELLED");
    }
}
