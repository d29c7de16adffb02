import Foundation
import Glibc
import ParleyApp
import ParleyNet
import ParleyObservability

// Signals first, before any thread exists, so SIGTERM always means a graceful shutdown.
TerminationSignals.install()
Socket.ignoreSIGPIPE()

let arguments = Array(CommandLine.arguments.dropFirst())
let exitCode = await CommandLineInterface.run(arguments)
exit(exitCode)
