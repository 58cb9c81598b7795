package dev.lease.samples.reactive;

import java.time.Duration;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.fence.R2dbcFence;
import dev.lease.reactive.ReactiveLeaseContext;

/** Bills invoices, each under its own lease, without blocking the event loop that serves the request. */
@Service
public class InvoiceBilling {

    private final DatabaseClient db;
    private final R2dbcFence fence;
    private final TransactionalOperator transactions;

    public InvoiceBilling(DatabaseClient db, R2dbcFence fence, TransactionalOperator transactions) {
        this.db = db;
        this.fence = fence;
        this.transactions = transactions;
    }

    // docs/reactive.md: billing
    /**
     * The lease is taken when the caller subscribes, the fence advanced to its token at grant (R2dbcFence, without
     * blocking), and the write carries the token in its own transaction: a holder whose lease was lost meanwhile is
     * refused with StaleTokenException instead of billing twice.
     */
    @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
    public Mono<Long> bill(long id) {
        return ReactiveLeaseContext.token()
                .flatMap(token -> fence.advance("invoice-" + id, token)
                        .then(db.sql("UPDATE invoice SET state = 'BILLED', billed_token = :token WHERE id = :id")
                                .bind("token", token.value()).bind("id", id).fetch().rowsUpdated())
                        .thenReturn(token.value()))
                .as(transactions::transactional);
    }
    // end docs

    /**
     * Streams the invoice's reminders while its lease is held; a lost lease cancels the stream and ends it with
     * LeaseLostException.
     */
    @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
    public Flux<Long> remind(long id, Duration every) {
        return Flux.interval(every).onBackpressureDrop();
    }
}
