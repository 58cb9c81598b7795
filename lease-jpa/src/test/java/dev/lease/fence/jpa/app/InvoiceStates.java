package dev.lease.fence.jpa.app;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class InvoiceStates {

    private final Invoices invoices;

    public InvoiceStates(Invoices invoices) {
        this.invoices = invoices;
    }

    @Transactional
    public void set(long id, String state) {
        invoices.findById(id).orElseThrow().setState(state);
    }
}
