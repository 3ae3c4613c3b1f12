document.getElementById("status").textContent = "Ready.";
