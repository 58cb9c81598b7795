package dev.lease.aop

import dev.lease.FencingToken
import dev.lease.LeaseKind
import dev.lease.LeaseLostException
import dev.lease.LeaseSpec
import dev.lease.Leased
import dev.lease.core.BackendRouter
import dev.lease.core.LeaseDefaults
import dev.lease.core.LeaseEngine
import dev.lease.testing.EmbeddedZooKeeper
import dev.lease.testing.TcpProxy
import dev.lease.testing.TestTiming.seconds
import dev.lease.zookeeper.ZooKeeperLeaseBackend
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.apache.curator.framework.CuratorFramework
import org.apache.curator.framework.CuratorFrameworkFactory
import org.apache.curator.retry.ExponentialBackoffRetry
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Supplier
import kotlin.time.toKotlinDuration

/**
 * Suspend functions under `@Leased` on a real ZooKeeper (behind a TCP proxy that can freeze the link): the lease is
 * really held in ZooKeeper while the coroutine runs (another client cannot get it, and gets a higher token after), and
 * a frozen link, which suspends the session, cancels the coroutine and fails the call with [LeaseLostException]
 * within the bound the backend contract gives the interrupt.
 */
class SuspendLeasedOnZooKeeperTest {

    @Test
    fun `held in ZooKeeper while the coroutine runs, with the grant's token in the coroutine`() {
        val otherClient = client(zooKeeper.connectString())
        val other = engine(ZooKeeperLeaseBackend(otherClient, "/leases", SESSION))
        try {
            withApplication { context ->
                val mail = ExclusiveMail(other)
                context.registerBean(InvoiceReminders::class.java, Supplier { InvoiceReminders(mail) })
                context.refresh()

                val token = runBlocking { context.getBean(InvoiceReminders::class.java).remind(7) }

                assertThat(mail.seen).`as`("tokens seen, and whether another client got the lease meanwhile")
                    .containsExactly(token to false)
                other.tryAcquire(LeaseSpec.of("invoice-7", LeaseKind.CORRECTNESS)).orElseThrow().use { successor ->
                    assertThat(successor.token().value()).`as`("the next holder's token").isGreaterThan(token.value())
                }
            }
        } finally {
            other.close()
            otherClient.close()
        }
    }

    @Test
    fun `a frozen link cancels the coroutine and the caller gets LeaseLostException`() {
        withApplication { context ->
            context.registerBean(ZooKeeperImports::class.java, *emptyArray<Any>())
            context.refresh()
            val imports = context.getBean(ZooKeeperImports::class.java)
            try {
                val outcome = runBlocking {
                    val call = async { runCatching { imports.importing() } }
                    withTimeout(seconds(30).toKotlinDuration()) {
                        while (imports.ticks() < 3) {
                            delay(10)
                        }
                    }
                    link.freeze()
                    withTimeout(LOSS_BOUND.toKotlinDuration()) { call.await() }
                }
                assertThat(outcome.exceptionOrNull()).isInstanceOf(LeaseLostException::class.java)
                    .hasMessageContaining("zk-import")
                assertThat(imports.cancelled()).`as`("the coroutine was cancelled").isTrue()
            } finally {
                link.unfreeze()
            }
            await().atMost(seconds(30)).until { context.getBean(LeaseEngine::class.java).held().isEmpty() }
        }
    }

    /** An application context on a ZooKeeper client of its own through the proxy; the test registers its beans. */
    private fun withApplication(test: (AnnotationConfigApplicationContext) -> Unit) {
        val curator = client(link.address())
        try {
            AnnotationConfigApplicationContext().use { context ->
                val backend = ZooKeeperLeaseBackend(curator, "/leases", SESSION)
                context.registerBean(ZooKeeperLeaseBackend::class.java, Supplier { backend })
                context.registerBean(LeaseEngine::class.java, Supplier { engine(backend) })
                context.registerBean(LeasedAnnotationBeanPostProcessor::class.java, *emptyArray<Any>())
                test(context)
            }
        } finally {
            curator.close()
        }
    }

    companion object {
        /** The session, and so the leases' ttl: the server's tick is 250 ms. */
        val SESSION: Duration = Duration.ofSeconds(6)

        /** The bound the backend contract suite gives the interrupt after a loss. */
        val LOSS_BOUND: Duration = SESSION.multipliedBy(2).plus(seconds(10))

        private val zooKeeper = EmbeddedZooKeeper.start()
        private val link = TcpProxy(zooKeeper.port())

        @JvmStatic
        @AfterAll
        fun stopServer() {
            link.close()
            zooKeeper.close()
        }

        /** An engine on [backend] whose leases last a session; the caller closes it. */
        fun engine(backend: ZooKeeperLeaseBackend) = LeaseEngine(
            BackendRouter.of(mapOf(LeaseKind.CORRECTNESS to backend, LeaseKind.EFFICIENCY to backend)),
            LeaseDefaults(SESSION, null),
        )

        fun client(connectString: String): CuratorFramework {
            val client = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs(SESSION.toMillis().toInt()).connectionTimeoutMs(seconds(2).toMillis().toInt())
                .retryPolicy(ExponentialBackoffRetry(100, 3)).build()
            client.start()
            assertThat(client.blockUntilConnected(seconds(20).toMillis().toInt(), TimeUnit.MILLISECONDS))
                .`as`("connected to $connectString").isTrue()
            return client
        }
    }
}

/** Tries, while the reminder is sent, to take its lease through another ZooKeeper client. */
class ExclusiveMail(private val other: LeaseEngine) : ReminderMail {

    val seen: MutableList<Pair<FencingToken, Boolean>> = CopyOnWriteArrayList()

    override suspend fun send(invoice: Long, token: FencingToken) {
        val taken = withContext(Dispatchers.IO) {
            other.tryAcquire(LeaseSpec.of("invoice-$invoice", LeaseKind.CORRECTNESS)).map { it.close() }.isPresent
        }
        seen.add(token to taken)
    }
}

open class ZooKeeperImports {

    private val ticks = AtomicInteger()
    private val cancelled = AtomicBoolean()

    @Leased(name = "zk-import", kind = LeaseKind.CORRECTNESS)
    open suspend fun importing(): Int {
        try {
            while (true) {
                delay(20)
                ticks.incrementAndGet()
            }
        } catch (cancellation: CancellationException) {
            cancelled.set(true)
            throw cancellation
        }
    }

    // Read through methods: the fields of a class proxy are not the target's.
    open fun ticks() = ticks.get()

    open fun cancelled() = cancelled.get()
}
