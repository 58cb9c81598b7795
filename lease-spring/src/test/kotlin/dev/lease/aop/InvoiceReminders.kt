package dev.lease.aop

import dev.lease.FencingToken
import dev.lease.LeaseKind
import dev.lease.Leased
import dev.lease.reactive.ReactiveLeaseContext
import kotlinx.coroutines.reactor.awaitSingle

/**
 * The Kotlin example of docs/reactive.md: a suspend function under `@Leased`, which reads its lease's token in the
 * coroutine and passes it on. Open, as the kotlin-spring compiler plugin makes a `@Component` class, so that Spring's
 * proxy can intercept it.
 */
open class InvoiceReminders(private val mail: ReminderMail) {

    @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
    open suspend fun remind(id: Long): FencingToken {
        val token = ReactiveLeaseContext.token().awaitSingle()
        mail.send(id, token) // suspends; cancelled if the lease is lost meanwhile
        return token
    }
}

/** Where reminders go: in an application, a suspending client of another service that checks the token. */
interface ReminderMail {

    suspend fun send(invoice: Long, token: FencingToken)
}
