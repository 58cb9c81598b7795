package dev.lease.samples.billing;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The billing service: {@link InvoiceBilling} bills an invoice under a {@code CORRECTNESS} lease on ZooKeeper, and
 * {@link Invoices} writes the result with the lease's fencing token, so the table refuses a holder that lost its
 * lease. Started twice (and once more in another JVM) by {@code demo.BillingDemo}.
 */
@SpringBootApplication
public class BillingApplication {
}
