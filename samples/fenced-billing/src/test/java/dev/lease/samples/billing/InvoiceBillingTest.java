package dev.lease.samples.billing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import dev.lease.FencingToken;
import dev.lease.fence.StaleTokenException;

/** The billing service on the embedded ZooKeeper and H2 of the default profile. */
@SpringBootTest(properties = "billing.instance=test")
class InvoiceBillingTest {

    @Autowired
    InvoiceBilling billing;

    @Autowired
    Invoices invoices;

    @Test
    void billsAnInvoiceOnceAndRecordsTheTokenItWroteWith() throws Exception {
        long id = invoices.open("Initech", 9_900);

        assertThat(billing.bill(id)).isTrue();
        assertThat(billing.bill(id)).as("billed already: nothing to do").isFalse();

        Invoice invoice = invoices.find(id);
        assertThat(invoice.isBilled()).isTrue();
        assertThat(invoice.fence()).isPositive();
        assertThat(invoices.charges(id)).singleElement()
                .isEqualTo(new Invoices.Charge(id, 9_900, "test", invoice.fence()));
    }

    @Test
    void theTableRefusesAWriteWithAnOlderTokenAndChargesNothing() {
        long id = invoices.open("Umbrella", 1_000);
        String lease = InvoiceBilling.leaseName(id);
        invoices.recordBilling(id, 1_000, new FencingToken(lease, 5), "newer");

        assertThatExceptionOfType(StaleTokenException.class)
                .isThrownBy(() -> invoices.recordBilling(id, 1_000, new FencingToken(lease, 4), "older"))
                .satisfies(ex -> assertThat(ex.current()).isEqualTo(5));
        assertThat(invoices.charges(id)).extracting(Invoices.Charge::instance).containsExactly("newer");
        assertThat(invoices.find(id).billedBy()).isEqualTo("newer");
    }
}
